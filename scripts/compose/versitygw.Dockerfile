# A local stand-in for versity/versitygw, built by scripts/compose/standins.sh only where no
# registry can provide the real image: the versitygw binary that scripts/install-tools.sh builds
# from the pinned tag. Laid out like the real image (the binary at /app/versitygw as the
# entrypoint, run as root, `wget` for the health check, which the real image has from Alpine's
# BusyBox and this one from Debian's).
FROM content-service-standin/bookworm:local
COPY versitygw /app/versitygw
RUN ln -s /bin/busybox /usr/local/bin/wget && mkdir -p /tmp/vgw
ENTRYPOINT ["/app/versitygw"]
