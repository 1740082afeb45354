#!/usr/bin/env bash
# Lints and renders the Helm chart (deploy/helm/toolgate) and renders both kustomizations
# (deploy/kubernetes, deploy/kubernetes-embedded), then checks every object: check.py says what.
# No cluster and no helm binary needed: Helm itself comes as a library in the helm-python-sdk
# package (Helm's Go SDK in a wheel; nothing is downloaded at run time), installed into
# .venv-tests when missing; kustomize is `kubectl kustomize`. Fails loudly when either is
# missing or cannot be installed. Takes about a second once installed (the install, a 75 MB
# wheel, a few seconds more).
set -euo pipefail
cd "$(dirname "$0")/../.."

helm_sdk=0.2.2
python=.venv-tests/bin/python
if ! "$python" -c "import helm_python, yaml, sys; sys.exit(helm_python.__version__ != '$helm_sdk')" 2>/dev/null; then
  echo "installing: helm-python-sdk $helm_sdk and PyYAML (.venv-tests)"
  if [ ! -x "$python" ]; then
    python3 -m venv .venv-tests || {
      echo "deploy/helm/check.sh: cannot make .venv-tests (python3 -m venv; Debian: python3-venv)" >&2
      exit 1
    }
  fi
  "$python" -m pip install --quiet --disable-pip-version-check "helm-python-sdk==$helm_sdk" PyYAML || {
    echo "deploy/helm/check.sh: cannot install helm-python-sdk $helm_sdk from PyPI (it needs a wheel" \
      "for this platform; x86_64 Linux has one)" >&2
    exit 1
  }
fi
# kustomize v4.1 or newer (the `labels` field): kubectl's own since 1.22. Debian's
# kubernetes-client package (1.20) is older than that, so it is not installed here; the machine
# image of this project ships a current kubectl.
if ! command -v kubectl >/dev/null; then
  echo "deploy/helm/check.sh: kubectl (1.22 or newer) is missing; it renders the kustomizations" \
    "(kubectl kustomize)" >&2
  exit 1
fi
exec "$python" deploy/helm/check.py
