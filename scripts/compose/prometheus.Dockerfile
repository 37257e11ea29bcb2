# A local stand-in for prom/prometheus, built by scripts/compose/standins.sh only where no
# registry can provide the real image: Debian's prometheus binary (the same 2.42 the tests run).
# Laid out like the real image where the Compose file relies on it: the binary as the
# entrypoint, the configuration under /etc/prometheus, the data in /prometheus, port 9090.
FROM content-service-standin/bookworm:local
COPY prometheus /bin/prometheus
RUN mkdir -p /etc/prometheus /prometheus
EXPOSE 9090
ENTRYPOINT ["/bin/prometheus"]
