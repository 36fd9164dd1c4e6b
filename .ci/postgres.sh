#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL server, for the tests that
# need one (store/postgres, the bot on postgres):
#
#   bash .ci/postgres.sh go test -race ./...
#
# It installs Debian's postgresql package when initdb is missing (as root),
# creates a cluster with initdb in a fresh temporary directory as an
# unprivileged user (PostgreSQL refuses to run as root; as root the script
# uses "nobody"), starts it on 127.0.0.1 at a free port and on a Unix socket
# in that directory, and runs the command with
#
#   GATEHOUSE_TEST_POSTGRES_DSN=postgres://gatehouse:<random>@127.0.0.1:<port>/postgres?sslmode=disable
#
# in its environment: the superuser "gatehouse" with a password (password
# authentication, so wrong passwords are refused as on a real server).
# Each test creates a database of its own from it and drops it after
# (internal/pgtest). The server stops and the directory goes when the
# command ends, however it ends; the script exits with the command's status.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi

# pgbin finds the directory of initdb, pg_ctl and postgres.
pgbin() {
  local d
  if d=$(command -v initdb 2>/dev/null) && [ -x "$(dirname "$d")/pg_ctl" ]; then
    dirname "$d"; return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      echo "$d"; return 0
    fi
  done
  return 1
}

if ! bin=$(pgbin); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "postgres.sh: no PostgreSQL server found (initdb); install Debian's postgresql package" >&2
    exit 1
  fi
  echo "== apt-get install postgresql" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin=$(pgbin)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-pg.XXXXXX")
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown nobody: "$dir"
  as=(runuser -u nobody --)
fi
# The directory is 0700 and owned by the server's user; the password
# file goes once initdb has read it.
chmod 0700 "$dir"
password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

stop() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

printf '%s\n' "$password" > "$dir/pw"
[ "$(id -u)" -eq 0 ] && chown nobody: "$dir/pw"
"${as[@]}" "$bin/initdb" -D "$dir/data" -U gatehouse --pwfile="$dir/pw" \
  --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
rm -f "$dir/pw"

# A free port: the server is started on a random one until one is free
# (the check and the start race with other processes, hence the retries).
started=
for _ in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 20000))
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    continue
  fi
  # fsync off: a test server holds nothing worth a power loss.
  if "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=200" \
    start >/dev/null; then
    started=1
    break
  fi
done
if [ -z "$started" ]; then
  echo "postgres.sh: the server did not start:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
fi

export GATEHOUSE_TEST_POSTGRES_DSN="postgres://gatehouse:$password@127.0.0.1:$port/postgres?sslmode=disable"
echo "== PostgreSQL $("$bin/postgres" --version | sed "s/^postgres (PostgreSQL) //") on 127.0.0.1:$port (GATEHOUSE_TEST_POSTGRES_DSN is set)" >&2
# Not exec: the trap stops the server when the command ends.
status=0
"$@" || status=$?
exit "$status"
