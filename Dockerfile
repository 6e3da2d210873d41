# Weft daemon image: WebSocket on 0.0.0.0:4500 with capability-token auth.
#
#   docker build -t weft .
#   openssl rand -hex 32 > weft-token
#   docker run --rm -p 127.0.0.1:4500:4500 \
#     -v "$PWD/weft-token:/run/secrets/weft-token:ro" \
#     -v weft-home:/var/lib/weft \
#     -e OPENAI_API_KEY weft
#
# Clients then connect to ws://127.0.0.1:4500 with `Authorization: Bearer <token>`.

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
# The stripped binary and its debug info apart (scripts/dist.sh; README "Release binary").
RUN scripts/dist.sh /dist

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git bash \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /var/lib/weft weft
COPY --from=build /dist/weft /usr/local/bin/weft
# Where backtraces look for the debug info of /usr/local/bin/weft.
COPY --from=build /dist/weft.debug /usr/lib/debug/usr/local/bin/weft.debug
USER weft
ENV WEFT_HOME=/var/lib/weft
WORKDIR /var/lib/weft
EXPOSE 4500
HEALTHCHECK CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/4500 && printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q ' 200 ' <&3"]
CMD ["weft", "app-server", "--listen", "ws://0.0.0.0:4500", "--ws-auth", "capability-token", "--ws-token-file", "/run/secrets/weft-token"]
