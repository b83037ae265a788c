#!/usr/bin/env bash
# Serves a site made by bench/site/generate.ts with nginx, one server block
# per host (127.0.1.k:PORT), on loopback only.
#
#   bench/nginx.sh start SITE_DIR     install nginx if missing, write SITE_DIR/nginx/nginx.conf, start
#   bench/nginx.sh stop  SITE_DIR     stop the nginx started for SITE_DIR (by its own pid file)
#   bench/nginx.sh status SITE_DIR    exit 0 when it runs
#
# Everything nginx writes stays in SITE_DIR/nginx/: its configuration, its
# pid file, the access log (access.log, one JSON object per request) and the
# error log. It never touches a system nginx: its own -p prefix, pid file and
# temp paths, and it listens only on the bench addresses (never port 80).
#
# Environment: PORT (default: the manifest's port, else 8080), NGINX_WORKERS (default 1).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
  echo "usage: $0 start|stop|status SITE_DIR" >&2
  exit 2
fi
dir=$(cd "$dir" && pwd)
run="$dir/nginx"
conf="$run/nginx.conf"
pidfile="$run/nginx.pid"

running() {
  [[ -s "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

find_nginx() {
  command -v nginx 2>/dev/null || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; } || true
}

install_nginx() {
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "nginx is not installed and this is not root: apt-get install nginx-light" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "installing nginx from Debian…" >&2
  # A package's postinst may try to start the system service; it listens on
  # port 80 and does not get in the way of this one.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >&2 ||
    { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >&2; } ||
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx >&2
}

write_conf() {
  local port=${PORT:-}
  if [[ -z "$port" && -f "$dir/manifest.json" ]]; then
    port=$(grep -o '"port":[0-9]*' "$dir/manifest.json" | head -1 | cut -d: -f2)
  fi
  port=${port:-8080}
  mkdir -p "$run/tmp"
  local user_line=""
  if [[ $(id -u) -eq 0 ]]; then
    # Workers drop root; www-data (Debian's nginx user) must be able to read the site.
    if id www-data >/dev/null 2>&1; then user_line="user www-data;"; else user_line="user nobody nogroup;"; fi
  fi
  {
    cat <<EOF
# Written by bench/nginx.sh for $dir
$user_line
worker_processes ${NGINX_WORKERS:-1};
worker_rlimit_nofile 65536;
pid $pidfile;
error_log $run/error.log warn;
daemon on;
events { worker_connections 4096; }
http {
    types {
        text/html html;
        text/css css;
        image/png png;
        application/xml xml;
        text/plain txt;
    }
    default_type application/octet-stream;
    log_format bench escape=json '{"t":\$msec,"host":"\$host","addr":"\$server_addr","method":"\$request_method","uri":"\$request_uri","status":\$status,"bytes":\$body_bytes_sent,"ua":"\$http_user_agent"}';
    access_log $run/access.log bench;
    client_body_temp_path $run/tmp/body;
    proxy_temp_path $run/tmp/proxy;
    fastcgi_temp_path $run/tmp/fastcgi;
    uwsgi_temp_path $run/tmp/uwsgi;
    scgi_temp_path $run/tmp/scgi;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    # Few enough cached descriptors that a fast crawler never runs the worker out of files.
    open_file_cache max=2000 inactive=10s;
    server_tokens off;
    log_not_found off;
    etag on;
EOF
    for hostdir in "$dir"/hosts/*/; do
      local host
      host=$(basename "$hostdir")
      case "$host" in 127.*) ;; *) echo "refusing to serve non-loopback host $host" >&2; exit 1 ;; esac
      printf '    server { listen %s:%s; server_name %s; root %s; index index.html; }\n' "$host" "$port" "$host" "${hostdir%/}"
    done
    echo '}'
  } >"$conf"
}

case "$cmd" in
  start)
    [[ -d "$dir/hosts" ]] || { echo "$dir/hosts does not exist: run bench/site/generate.ts first" >&2; exit 1; }
    if running; then
      echo "nginx already running for $dir (pid $(cat "$pidfile"))" >&2
      exit 0
    fi
    nginx=$(find_nginx)
    if [[ -z "$nginx" ]]; then
      install_nginx
      nginx=$(find_nginx)
      [[ -n "$nginx" ]] || { echo "nginx could not be installed" >&2; exit 1; }
    fi
    mkdir -p "$run"
    write_conf
    : >"$run/access.log"
    "$nginx" -t -q -p "$run" -e "$run/error.log" -c "$conf"
    "$nginx" -p "$run" -e "$run/error.log" -c "$conf"
    for _ in $(seq 50); do running && break; sleep 0.1; done
    running || { echo "nginx did not start; see $run/error.log" >&2; exit 1; }
    echo "nginx serving $(ls "$dir/hosts" | wc -l) hosts from $dir (pid $(cat "$pidfile"), access log $run/access.log)" >&2
    ;;
  stop)
    if ! running; then
      echo "nginx is not running for $dir" >&2
      exit 0
    fi
    pid=$(cat "$pidfile")
    kill -QUIT "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; fi
    echo "nginx stopped (pid $pid)" >&2
    ;;
  status)
    running
    ;;
  *)
    echo "usage: $0 start|stop|status SITE_DIR" >&2
    exit 2
    ;;
esac
