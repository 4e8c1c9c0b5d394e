#!/usr/bin/env bash
# A test certificate authority and a certificate for 127.0.0.1/localhost signed by it, made once with
# openssl into $VISION_STACK_DIR/live-tls (never the repo). The https test server uses the certificate;
# test processes trust the CA through NODE_EXTRA_CA_CERTS (jest.config.js, scripts/test-distributed.sh).
# Prints the directory (ca.pem, cert.pem, key.pem).
set -euo pipefail
OUT="${VISION_STACK_DIR:-${HOME:-/tmp}/.cache/vision-stack}/live-tls"
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9
if [ ! -s "$OUT/cert.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=vision-stack test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
    -keyout "$OUT/ca.key" -out "$OUT/ca.pem" >/dev/null 2>&1
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$OUT/key.pem" -out "$OUT/req.csr" >/dev/null 2>&1
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$OUT/ext.cnf"
  openssl x509 -req -in "$OUT/req.csr" -CA "$OUT/ca.pem" -CAkey "$OUT/ca.key" -CAcreateserial -days 3650 \
    -extfile "$OUT/ext.cnf" -out "$OUT/cert.tmp.pem" >/dev/null 2>&1
  mv "$OUT/cert.tmp.pem" "$OUT/cert.pem"
fi
echo "$OUT"
