# The bridge with its embedded local service, for SIP / Twilio deployments. Built by the same
# set-up as a developer's machine (scripts/bootstrap.sh --runtime), so the two cannot drift.
#   podman build -t voice-bridge .            (or docker build)
#   podman build --build-arg BASE=localhost/debian-base:bookworm -t voice-bridge .
# BASE: any Debian bookworm image; with no Node >= 22.12 in it, the set-up installs one.
ARG BASE=node:24-bookworm-slim
FROM ${BASE}

ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /app

# Packages, Node and npm dependencies first: a change to the code below does not redo them.
COPY package.json package-lock.json .npmrc ./
COPY scripts/bootstrap.sh scripts/env.sh ./scripts/
COPY native ./native
RUN scripts/bootstrap.sh --runtime \
 && rm -rf /var/lib/apt/lists/* /root/.npm

COPY bin ./bin
COPY app ./app
COPY tools ./tools
COPY src ./src
COPY codecs ./codecs
COPY bridges ./bridges
COPY config ./config
COPY console ./console

# Calls, recordings, reports and the local service's files live in /data (mount a volume).
RUN useradd --system --home-dir /app --shell /usr/sbin/nologin voicebridge \
 && mkdir -p /data && chown voicebridge /data
USER voicebridge
ENV LOG_FORMAT=json SVC_LOCAL_DATA_DIR=/data PORT=8080
EXPOSE 8080 5060/udp 5060/tcp
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["/app/bin/healthcheck"]
# bin/voice-bridge execs node: SIGTERM reaches the bridge, which drains (Twilio, SIP 503s) and exits.
ENTRYPOINT ["/app/bin/voice-bridge"]
CMD ["start"]
