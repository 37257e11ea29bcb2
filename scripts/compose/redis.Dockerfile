# A local stand-in for redis:7.0, built by scripts/compose/standins.sh only where no registry can
# provide the real image: Debian bookworm with Debian's redis-server package (7.0), installed by
# apt (content-service-standin/redis). Laid out like the real image where the Compose file relies
# on it: `redis-server` and `redis-cli` on PATH, run as the unprivileged `redis` user, in /data.
# The real image has protected mode off by default; the Compose file turns it off for both.
FROM content-service-standin/redis:local
RUN mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server"]
