"""Keyed digests (HMAC-SHA256) over what the harness keeps and serves again: stored verdicts, baselines and peaks
(store.py), finished build directories (eval/build.py), precompiled headers (fastbuild/maker.py). Each is sealed
by the parent when it is written and checked before it is served; what fails the check is made again.

The key is this user's, made once (KEY_FILE, mode 0600), and hidden from every sandboxed child
(eval/confine.py): a child that found a way to write one of these things still cannot make its seal. With
--sandbox off a candidate can read the key, and nothing is proven for what such runs leave behind.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from harness.process import write_atomic

KEY_FILE_ENV = "HARNESS_KEY_FILE"


def key_path() -> Path:
    if os.environ.get(KEY_FILE_ENV):
        return Path(os.environ[KEY_FILE_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "kernel-harness" / "key"


@functools.cache
def _key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass  # made before, or by another harness process just now
    else:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    text = path.read_text().strip()
    if len(text) < 32:  # another process is writing it: its write is one small call, so retry once
        text = path.read_text().strip()
    return bytes.fromhex(text)


def ensure_key() -> Path:
    """The key file, made if it is not there yet (before children start, so that they find it hidden)."""
    path = key_path()
    _key(path)
    return path


def seal(*parts: str | bytes) -> str:
    """The digest of the parts, in order (each length-prefixed, so no two sequences of parts share one)."""
    mac = hmac.new(_key(key_path()), digestmod=hashlib.sha256)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        mac.update(len(data).to_bytes(8, "little"))
        mac.update(data)
    return mac.hexdigest()


def verify(digest: str | None, *parts: str | bytes) -> bool:
    return digest is not None and hmac.compare_digest(digest, seal(*parts))


def file_digests(directory: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """'relative path sha256' for every file under directory (links by their target), sorted; top-level names
    in `skip` left out."""
    lines = []
    for root, dirs, files in os.walk(directory):
        rel_root = Path(root).relative_to(directory)
        if rel_root == Path("."):
            dirs[:] = [d for d in dirs if d not in skip]
            files = [f for f in files if f not in skip]
        for name in files:
            path = Path(root) / name
            rel = (rel_root / name).as_posix()
            if path.is_symlink():
                lines.append(f"{rel} -> {os.readlink(path)}")
                continue
            lines.append(f"{rel} {_sha256(path)}")
    return sorted(lines)


def _sha256(path: Path) -> str:
    # hashlib.file_digest would do, from Python 3.11 on; 3.10 is supported
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def seal_directory(directory: Path, seal_file: str, skip: frozenset[str] = frozenset()) -> None:
    """Seal every file under `directory` (top-level names in `skip`, and the seal itself, aside) into `seal_file`
    there."""
    write_atomic(directory / seal_file, seal(*file_digests(directory, skip=skip | {seal_file})))


def directory_sealed(directory: Path, seal_file: str, skip: frozenset[str] = frozenset()) -> bool:
    """Whether `directory` holds what seal_directory() sealed, not a byte more or less."""
    try:
        return verify((directory / seal_file).read_text().strip(),
                      *file_digests(directory, skip=skip | {seal_file}))
    except OSError:
        return False
