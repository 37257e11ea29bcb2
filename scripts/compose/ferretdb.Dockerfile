# FerretDB v1.24.2 on SQLite, standing in for MongoDB in the Compose end-to-end run
# (scripts/compose-e2e.sh, through compose.e2e.yml): no MongoDB image or binary exists on the
# machines CI runs on. The binary is the one scripts/install-tools.sh builds; it runs as an
# unprivileged user, with its databases in /data/db (the volume the production file mounts there).
FROM content-service-standin/bookworm:local
COPY ferretdb /usr/local/bin/ferretdb
RUN echo 'ferretdb:x:999:' >>/etc/group \
 && echo 'ferretdb:x:999:999::/data:/usr/sbin/nologin' >>/etc/passwd \
 && mkdir -p /data/db && chown -R 999:999 /data
USER ferretdb
EXPOSE 27017
ENTRYPOINT ["/usr/local/bin/ferretdb"]
CMD ["--listen-addr", ":27017", "--sqlite-dir", "/data/db", "--log-level", "warn"]
