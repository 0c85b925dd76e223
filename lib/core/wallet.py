"""Wallet loading and password-less creation (offline chain and tests only)."""

from __future__ import annotations

import os

import bittensor as bt

from audionet.lib.core.errors import ConfigError


def load_wallet(name: str, hotkey: str, path: str) -> bt.Wallet:
    """Load an existing wallet; one clear line if its hotkey file is missing."""
    wallet = bt.Wallet(name=name, hotkey=hotkey, path=os.path.expanduser(path))
    try:
        wallet.hotkey  # noqa: B018 - reads the hotkey file now, not mid-request
    except Exception as error:  # bittensor raises several kinds for a missing/locked key
        raise ConfigError(f"cannot load hotkey '{hotkey}' of wallet '{name}' under {path}: {error}") from None
    return wallet


def create_wallet(name: str, hotkey: str, path: str) -> bt.Wallet:
    """Create (or reuse) an unencrypted coldkey + hotkey under `path`."""
    wallet = bt.Wallet(name=name, hotkey=hotkey, path=path)
    if not os.path.exists(os.path.join(path, name, "hotkeys", hotkey)):
        wallet.create_new_coldkey(use_password=False, suppress=True, overwrite=True)
        wallet.create_new_hotkey(use_password=False, suppress=True, overwrite=True)
    return bt.Wallet(name=name, hotkey=hotkey, path=path)
