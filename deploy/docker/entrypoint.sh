#!/bin/sh
# Chooses the process of the one evals image (deploy/docker/Dockerfile) and execs it, so node is the
# process that receives SIGTERM (graceful shutdown, X4).
#   <no argument>          node dist/apps/$APP/src/main.js           (APP defaults to ingestion)
#   <app> [args...]        node dist/apps/<app>/src/main.js [args...] (any app with a compiled main)
#   migrate [args...]      node dist/libs/persistence/src/migrate.js  (the migration job)
#   keys [args...]         node dist/libs/platform/src/auth/create-key.js (API keys: create, list, revoke)
#   anything else          run as given (node ..., sh, ...)
set -eu

# Absolute paths: the working directory is left to the caller (the CLI resolves file arguments against it).
# EVALS_HOME (default /app, the image's WORKDIR) only exists to test this script outside the image.
ROOT="${EVALS_HOME:-/app}"
main_of() { echo "$ROOT/dist/apps/$1/src/main.js"; }

if [ "$#" -gt 0 ]; then
  case "$1" in
    migrate)
      shift
      exec node "$ROOT/dist/libs/persistence/src/migrate.js" "$@"
      ;;
    keys)
      shift
      exec node "$ROOT/dist/libs/platform/src/auth/create-key.js" "$@"
      ;;
    -*)
      ;; # flags for the default app
    *)
      if [ -f "$(main_of "$1")" ]; then
        APP="$1"
        shift
      else
        exec "$@"
      fi
      ;;
  esac
fi

APP="${APP:-ingestion}"
main="$(main_of "$APP")"
if [ ! -f "$main" ]; then
  echo "evals-entrypoint: unknown app '$APP' (no $main); apps: $(ls "$ROOT/dist/apps" | tr '\n' ' ')" >&2
  exit 64
fi
export APP
exec node "$main" "$@"
