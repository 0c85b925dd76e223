"""VoxCPM2 through the voxcpm package (`voxcpm:<HF id or folder>`)."""
