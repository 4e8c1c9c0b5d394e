#!/usr/bin/env bash
# A test certificate authority and a certificate for 127.0.0.1/localhost signed by it, made once with
# openssl into $VISION_STACK_DIR/live-tls (never the repo). The https test server uses the certificate;
# test processes trust the CA through NODE_EXTRA_CA_CERTS (jest.config.js, scripts/test-distributed.sh).
# Prints the directory (ca.pem, cert.pem, key.pem).
#   tls.sh --trust   prints instead a file for NODE_EXTRA_CA_CERTS: the test CA plus whatever the current
#                    NODE_EXTRA_CA_CERTS names (a machine may already set it to its own bundle: Node takes one
#                    file, and pointing it at ca.pem alone would drop the machine's CAs, keeping it drops ours).
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
if [ "${1:-}" = "--trust" ]; then
  prev="${NODE_EXTRA_CA_CERTS:-}"
  if [ -z "$prev" ] || [ ! -r "$prev" ] || cmp -s "$prev" "$OUT/ca.pem"; then echo "$OUT/ca.pem"; exit 0; fi
  if grep -qF "$(sed -n 2p "$OUT/ca.pem")" "$prev"; then echo "$prev"; exit 0; fi
  trust="$OUT/trust-$(printf '%s' "$prev" | cksum | cut -d' ' -f1).pem"
  cat "$prev" "$OUT/ca.pem" >"$trust.tmp.$$" && mv "$trust.tmp.$$" "$trust"
  echo "$trust"
  exit 0
fi
echo "$OUT"
