"""audionet: a Bittensor subnet node for audio (TTS, voice clone, music).

The checkout keeps its top-level folders (lib/, models/, neurons/, benchmarks/); this folder makes them one
package by links (pythonpath/audionet/lib -> ../../lib, ...). Everything that follows imports resolves
`audionet.*` through it the same way: Python with `PYTHONPATH=pythonpath` (`make gpu-check`, no install),
the editable install (a .pth naming this folder), an editor or basedpyright (`make lint`), and the regular
install, which copies the linked folders into site-packages/audionet/."""
