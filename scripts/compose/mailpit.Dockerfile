# A local stand-in for axllent/mailpit, built by scripts/compose/standins.sh only where no
# registry can provide the real image: the Mailpit binary that scripts/install-tools.sh builds
# from the pinned tag (web UI embedded). Laid out like the real image (the binary at /mailpit as
# the entrypoint, run as root, SMTP on 1025 and the web UI and API on 8025, `/mailpit readyz` as
# its health check).
FROM content-service-standin/bookworm:local
COPY mailpit /mailpit
EXPOSE 1025 8025
ENTRYPOINT ["/mailpit"]
