# Servers on loopback and 'xprobectl metrics' measured against loadgen's
# known rates: shared by selftests/tests/51-metrics.sh and bench/metrics.sh
# (sourced, in the guest).

# server_start redis|memcache|http PORT: start the server, wait until it
# answers; its pid (the process that serves: nginx without a master) in SRV_PID.
server_start() {
	case $1 in
	redis)
		redis-server --port "$2" --save '' --appendonly no --daemonize no \
			> /tmp/srv-$2.log 2>&1 &
		SRV_PID=$! ;;
	memcache)
		memcached -u root -t 2 -p "$2" -U 0 -l 127.0.0.1 > /tmp/srv-$2.log 2>&1 &
		SRV_PID=$! ;;
	http)
		mkdir -p /tmp/ngx-$2 /var/lib/nginx /var/log/nginx
		cat > /tmp/ngx-$2/nginx.conf <<-CONF
		user root;
		daemon off;
		master_process off;
		error_log /tmp/ngx-$2/error.log;
		pid /tmp/ngx-$2/nginx.pid;
		events { worker_connections 512; }
		http {
			access_log off;
			keepalive_requests 1000000;
			client_body_temp_path /tmp/ngx-$2/body;
			proxy_temp_path /tmp/ngx-$2/proxy;
			fastcgi_temp_path /tmp/ngx-$2/fastcgi;
			uwsgi_temp_path /tmp/ngx-$2/uwsgi;
			scgi_temp_path /tmp/ngx-$2/scgi;
			server {
				listen 127.0.0.1:$2;
				location / { return 200 "ok\n"; }
			}
		}
		CONF
		nginx -p /tmp/ngx-$2 -c /tmp/ngx-$2/nginx.conf > /tmp/srv-$2.log 2>&1 &
		SRV_PID=$! ;;
	*)
		echo "server_start: unknown server $1" >&2
		return 1 ;;
	esac
	# loadgen dials for up to 5 s: one answered request says the server is
	# up. Tried 10 times: on the debug kernel beside another VM a first
	# answer took longer than one 0.3 s try.
	local i=0
	until loadgen -p "$1" -P "$2" -r 20 -c 1 -d 0.3 > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 10 ] && continue
		echo "server_start: $1 on port $2 does not answer: $(tail -n 3 /tmp/srv-$2.log)" >&2
		return 1
	done
}

server_stop() {
	kill "$SRV_PID" 2> /dev/null
	wait "$SRV_PID" 2> /dev/null
}

# metrics_point PROTO PORT PID RATE SECS [XPROBECTL-OPTIONS...]: load PID's
# server at RATE (0: as fast as it goes) for SECS under 'xprobectl metrics'
# and print one line:
#   target actual observed saturation_cv2 variance_us2 slack_us run_rate
# actual: loadgen's responses/s between its first and last response (the
# estimator metrics applies on the server, on the client's clock); run_rate:
# its responses over the whole run (lower when loadgen stalls at the end);
# the rest from the metrics total.
metrics_point() {
	local proto=$1 port=$2 pid=$3 rate=$4 secs=$5 xp i lg
	shift 5
	: > /tmp/mp.err
	xprobectl metrics --json "$@" "$pid" > /tmp/mp.json 2> /tmp/mp.err &
	xp=$!
	i=0
	while ! grep -q 'metrics of pid' /tmp/mp.err; do
		i=$((i + 1))
		if [ $i -gt 400 ] || ! kill -0 $xp 2> /dev/null; then
			echo "metrics_point: xprobectl metrics did not start: $(cat /tmp/mp.err)" >&2
			return 1
		fi
		sleep 0.05
	done
	lg=$(loadgen -p "$proto" -P "$port" -r "$rate" -c 8 -d "$secs" 2> /tmp/mp.lgerr)
	kill -INT $xp
	wait $xp
	case $lg in
	*span_rate*) ;;
	*) echo "metrics_point: loadgen failed: $(cat /tmp/mp.lgerr)" >&2; return 1 ;;
	esac
	echo "$lg" > /tmp/mp.loadgen
	awk -v target="$rate" -v lg="$lg" '
		BEGIN { n = split(lg, f, " "); for (i = 1; i < n; i++) { if (f[i] == "span_rate") actual = f[i + 1]; if (f[i] == "rate") run = f[i + 1] } }
		/"type":"total"/ {
			for (i = 1; i <= split($0, kv, ","); i++) {
				split(kv[i], p, ":"); gsub(/[{}"]/, "", p[1]); gsub(/[{}"]/, "", p[2]); v[p[1]] = p[2]
			}
			printf "%s %s %s %s %s %s %s\n", target, actual, v["rps"], v["saturation_cv2"], v["saturation_us2"], v["slack_us"], run
		}' /tmp/mp.json | grep . || { echo "metrics_point: no total from xprobectl: $(cat /tmp/mp.err)" >&2; return 1; }
}

# r2 < "actual observed" lines: the coefficient of determination of a
# least-squares line through them, then its slope.
r2() {
	awk '{ n++; x += $1; y += $2; xx += $1 * $1; yy += $2 * $2; xy += $1 * $2 }
	END {
		sxx = xx - x * x / n; syy = yy - y * y / n; sxy = xy - x * y / n
		if (sxx <= 0 || syy <= 0) { print "0 0"; exit }
		printf "%.5f %.4f\n", sxy * sxy / (sxx * syy), sxy / sxx
	}'
}
