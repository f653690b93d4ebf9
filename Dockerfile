# The bridge with its embedded local service, for SIP / Twilio deployments.
#   podman build -t voice-bridge .            (or docker build)
#   podman build --build-arg BASE=localhost/debian-base:bookworm -t voice-bridge .
# BASE: any Debian bookworm image; with no Node >= 22.12 in it, the set-up installs one.
# Three stages (docs/deployment.md): ffmpeg and build have the compilers and headers; the image is
# what runs and the code, on no base (FROM scratch).
ARG BASE=node:24-bookworm-slim

# ffmpeg from Debian's source, with the demuxers, decoders and encoders the local service uses.
FROM ${BASE} AS ffmpeg
COPY deploy/image/ffmpeg.sh /usr/local/src/
RUN /usr/local/src/ffmpeg.sh /opt/ffmpeg && rm -rf /var/lib/apt/lists/*

# Built by the same set-up as a developer's machine (scripts/bootstrap.sh --image: --runtime less
# Debian's ffmpeg), so the two cannot drift: packages, Node, npm ci --omit=dev, the native pieces.
FROM ${BASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /app

# Packages, Node and npm dependencies first: a change to the code below does not redo them.
COPY package.json package-lock.json .npmrc ./
COPY scripts/bootstrap.sh scripts/env.sh scripts/registry-fetch.py ./scripts/
COPY native ./native
RUN scripts/bootstrap.sh --image \
 && rm -rf /var/lib/apt/lists/* /root/.npm

# The image's file tree in /rootfs: Node, the production node_modules, the native pieces, ffmpeg,
# bash and coreutils, each with the libraries it loads; the speech data; the users.
COPY --from=ffmpeg /opt/ffmpeg /opt/ffmpeg
COPY deploy/image/runtime-root.sh ./deploy/image/
# binutils for strip; LAME, the one library the image's ffmpeg loads that Debian's base lacks.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils libmp3lame0 >/dev/null \
 && useradd --system --home-dir /app --shell /usr/sbin/nologin voicebridge \
 && deploy/image/runtime-root.sh /rootfs /opt/ffmpeg/bin

FROM scratch
COPY --from=build /rootfs /
ENV PATH=/app/.tools/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Calls, recordings, reports and the local service's files live in /data (mount a volume).
RUN mkdir -p /data && chown voicebridge /data
WORKDIR /app
COPY bin ./bin
COPY app ./app
COPY tools ./tools
COPY src ./src
COPY codecs ./codecs
COPY bridges ./bridges
COPY config ./config
COPY console ./console

USER voicebridge
ENV LOG_FORMAT=json SVC_LOCAL_DATA_DIR=/data PORT=8080
EXPOSE 8080 5060/udp 5060/tcp
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["/app/bin/healthcheck"]
# bin/voice-bridge execs node: SIGTERM reaches the bridge, which drains (Twilio, SIP 503s) and exits.
ENTRYPOINT ["/app/bin/voice-bridge"]
CMD ["start"]
