# A local stand-in for jaegertracing/jaeger (v2), built by scripts/compose/standins.sh only where
# no registry can provide the real image: the binary scripts/install-tools.sh builds from the
# same release's module (v1.76.0 is v2.13.0). Laid out like the real image: the binary at
# /cmd/jaeger/jaeger-linux as the entrypoint, listening on every interface (JAEGER_LISTEN_HOST),
# its default all-in-one configuration (OTLP on 4317/4318, the UI and query API on 16686).
FROM content-service-standin/bookworm:local
COPY jaeger /cmd/jaeger/jaeger-linux
ENV JAEGER_LISTEN_HOST=0.0.0.0
EXPOSE 4317 4318 16686
ENTRYPOINT ["/cmd/jaeger/jaeger-linux"]
