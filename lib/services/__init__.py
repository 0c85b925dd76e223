"""Services: one module per kind of request (tts, vc, music), and the registry
that miner, validator, localnet, audionet-score and audionet-bench iterate.

    from audionet.lib import services
    services.get("tts").draw(rng, None)          # a fresh request, as a validator makes one
    for service in services.all_services(): ...  # every registered service

A new service is one module with a `Service` subclass and one `register` call.
"""

from audionet.lib.services.base import Prompt, Service
from audionet.lib.services.music import MusicGeneration, MusicRequest
from audionet.lib.services.registry import (
    PRESET_NAMES,
    BackendSettings,
    all_services,
    get,
    names,
    parse_request,
    register,
    registered,
    service_list,
    sources_from_flags,
    unregister,
)
from audionet.lib.services.tts import TextToSpeech, TTSRequest
from audionet.lib.services.vc import VCRequest, VoiceClone

TTS = register(TextToSpeech())
VC = register(VoiceClone())
MUSIC = register(MusicGeneration())

__all__ = [
    "MUSIC",
    "PRESET_NAMES",
    "BackendSettings",
    "TTS",
    "VC",
    "MusicGeneration",
    "MusicRequest",
    "Prompt",
    "Service",
    "TTSRequest",
    "TextToSpeech",
    "VCRequest",
    "VoiceClone",
    "all_services",
    "get",
    "names",
    "parse_request",
    "register",
    "registered",
    "service_list",
    "sources_from_flags",
    "unregister",
]
