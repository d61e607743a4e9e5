#!/usr/bin/env bash
# `npm run deploy:local`: deploys the LocalStack fallback of the stack (target=localstack, stage=local) with
# cdklocal. Needs `docker compose up -d --wait` first (LocalStack on port 4566, MySQL as compose service `mysql`).
# Endpoint: AWS_ENDPOINT_URL, as for the tests (default http://localhost.localstack.cloud:4566, which resolves
# to 127.0.0.1). cdklocal also needs an S3 endpoint whose sub-domains resolve (asset buckets are addressed
# virtual-host style): AWS_ENDPOINT_URL_S3, default http://s3.localhost.localstack.cloud:<port>. cdklocal
# drops other AWS_* variables and uses test credentials in us-east-1.
# Extra arguments go to `cdklocal deploy`, e.g. `npm run deploy:local -- -c localDatabaseUrl=mysql://…`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export AWS_ENDPOINT_URL="${AWS_ENDPOINT_URL:-http://localhost.localstack.cloud:4566}"
port="$(sed -nE 's#^[a-z]+://[^/:]+:([0-9]+)/?$#\1#p' <<<"$AWS_ENDPOINT_URL")"
export AWS_ENDPOINT_URL_S3="${AWS_ENDPOINT_URL_S3:-http://s3.localhost.localstack.cloud:${port:-4566}}"
export CDK_DISABLE_CLI_TELEMETRY=true

if [ "${1:-}" != "--synth-only" ] && ! curl -sf "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null; then
  echo "deploy:local: LocalStack does not answer at $AWS_ENDPOINT_URL; run: docker compose up -d --wait" >&2
  exit 1
fi

context=(-c target=localstack -c stage=local)
if [ "${1:-}" = "--synth-only" ]; then
  # What CI can check without Docker: cdklocal accepts the environment and the fallback synthesizes.
  shift
  exec cdklocal synth "${context[@]}" --quiet "$@"
fi
cdklocal bootstrap "${context[@]}"
cdklocal deploy "${context[@]}" --require-approval never "$@"
