# A local stand-in for haproxy:2.6, built by scripts/compose/standins.sh only where no registry can
# provide the real image: Debian bookworm with Debian's haproxy package (2.6), installed by apt
# (content-service-standin/haproxy). Laid out like the real image where the Compose file relies on
# it: the configuration read from /usr/local/etc/haproxy/haproxy.cfg, run as the unprivileged
# `haproxy` user in the foreground with the master process (`-W -db`, which the real image's
# entrypoint adds), SIGUSR1 to stop (a soft stop: it finishes what it holds), and bash for the
# health check.
FROM content-service-standin/haproxy:local
RUN mkdir -p /usr/local/etc/haproxy
USER haproxy
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
