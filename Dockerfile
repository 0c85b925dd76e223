# audionet on a CUDA host (docs/gpu-hosts.md). The NVIDIA driver (580 or newer: torch 2.13 brings CUDA 13)
# and the NVIDIA Container Toolkit live on the host; CUDA 13 and cuDNN 9 come in torch's wheels, which
# onnxruntime-gpu 1.31 (a CUDA 13 build, requirements-gpu.txt) uses too.
#   docker build -t audionet .                       (--build-arg WITH_RAY=1 for --pool.backend ray)
#   docker run --gpus all -p 8091:8091 -v ~/.bittensor/wallets:/root/.bittensor/wallets:ro \
#     -v audionet-cache:/root/.cache -v audionet-state:/root/.audionet \
#     audionet audionet-miner --netuid 16 --wallet.name my_cold --wallet.hotkey my_miner \
#     --axon.port 8091 --axon.external_ip 203.0.113.7 --pool.devices auto
FROM python:3.11-slim-bookworm

ARG WITH_RAY=0
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /opt/audionet

# Dependencies before the code, so a code change rebuilds only the last layer. Every pip call passes
# constraints.txt: torch and torchaudio stay PyPI's builds (torch 2.13.0 is the CUDA 13 one). Kokoro and DNSMOS
# on the GPU: onnxruntime-gpu replaces the CPU wheel (both install the module `onnxruntime`).
COPY constraints.txt requirements.txt requirements-nodeps.txt requirements-gpu.txt ./
RUN pip install -c constraints.txt --upgrade pip "setuptools>=64" \
 && pip install -c constraints.txt -r requirements.txt \
 && pip install -c constraints.txt --no-deps -r requirements-nodeps.txt \
 && pip uninstall -y onnxruntime \
 && pip install -c constraints.txt -r requirements-gpu.txt \
 && if [ "$WITH_RAY" = "1" ]; then pip install -c constraints.txt "ray==2.60.0"; fi

COPY setup.py README.md ./
COPY lib lib
COPY models models
COPY neurons neurons
COPY benchmarks benchmarks
RUN pip install -c constraints.txt --no-deps --no-build-isolation .

EXPOSE 8091
CMD ["audionet-miner", "--help"]
