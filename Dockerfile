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

# Dependencies before the code, so a code change rebuilds only the last layer. The torch pin stays on
# every install line: without it pip may pick another torch. Kokoro and DNSMOS on the GPU: onnxruntime-gpu
# replaces the CPU wheel (both install the module `onnxruntime`).
COPY requirements.txt requirements-nodeps.txt requirements-gpu.txt ./
RUN pip install --upgrade pip "setuptools>=64" \
 && pip install torch==2.13.0 \
 && pip install torch==2.13.0 -r requirements.txt \
 && pip install --no-deps -r requirements-nodeps.txt \
 && pip uninstall -y onnxruntime \
 && pip install torch==2.13.0 -r requirements-gpu.txt \
 && if [ "$WITH_RAY" = "1" ]; then pip install torch==2.13.0 "ray==2.60.0"; fi

COPY setup.py README.md ./
COPY lib lib
COPY models models
COPY neurons neurons
COPY benchmarks benchmarks
RUN pip install --no-deps --no-build-isolation .

EXPOSE 8091
CMD ["audionet-miner", "--help"]
