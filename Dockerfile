# The bridge with its embedded local service, for SIP / Twilio deployments.
FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng pocketsphinx pocketsphinx-en-us ffmpeg sox libsox-fmt-all libespeak-ng-dev libpocketsphinx-dev libsphinxbase-dev pkg-config \
      python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --no-audit --no-fund
COPY native ./native
RUN native/build.sh
COPY bin ./bin
COPY src ./src
COPY codecs ./codecs
COPY bridges ./bridges
ENV NODE_ENV=production LOG_FORMAT=json
EXPOSE 8080
HEALTHCHECK CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["bin/voice-bridge"]
CMD ["start"]
