"""What a child that runs a candidate's code may touch (sandbox.py does the confining): its own scratch
directory, read-only everything else, the GPU only where it evaluates on one, and nothing of the results store
or of the user's credentials. Decided here, in the parent, from the settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness import device_lock, sandbox, seal
from harness.config import Settings
from harness.errors import InputError

# Credentials a candidate has no reason to read (with no network it could still print them into its log, which
# feedback shows to the model).
CREDENTIALS = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".docker", ".kube", ".netrc",
               ".git-credentials", ".pypirc")


class SandboxUnavailable(InputError, RuntimeError):
    """The sandbox was asked for and this machine cannot give it (probe()'s reason in the message)."""


def enabled(mode: str, off_switch: str = "--sandbox off") -> bool:
    """The switch: "off" runs children unsandboxed; "on" sandboxes them, or raises SandboxUnavailable saying what
    the kernel refused and how to do without; "auto" sandboxes them where the sandbox works."""
    if mode not in ("on", "off", "auto"):
        raise ValueError(f"sandbox mode {mode!r}: expected on, off or auto")
    if mode == "off":
        return False
    reason = sandbox.probe()
    if reason is not None and mode == "on":
        raise SandboxUnavailable(f"the sandbox for child processes does not work here: {reason}. "
                                 f"Use {off_switch} to run them without it (no isolation from the harness)")
    return reason is None


def require(settings: Settings) -> None:
    """Before anything runs: raise SandboxUnavailable (with what the kernel refused and the way round it) where
    the sandbox is on and cannot work on this machine."""
    enabled(settings.sandbox, off_switch="--sandbox off (or HARNESS_SANDBOX=off)")


def hidden(settings: Settings) -> tuple[Path, ...]:
    """The store, the key that seals what the harness keeps (seal.py), the user's credentials, and the GPUs'
    locks (device_lock.py: a candidate holding one would stall every other evaluation on its GPU)."""
    db = settings.db
    home = Path.home()
    return (db, *(db.with_name(db.name + end) for end in ("-wal", "-shm", "-journal")), seal.ensure_key(),
            *(home / name for name in CREDENTIALS), device_lock.lock_dir())


@dataclass(frozen=True)
class Confinement:
    """The sandbox every candidate child of one evaluation gets; each its own scratch directory."""

    hidden: tuple[Path, ...]

    def policy(self, scratch: Path, gpu: bool = False) -> sandbox.Policy:
        return sandbox.Policy(scratch=scratch, hidden=self.hidden, gpu=gpu)


def confinement(settings: Settings) -> Confinement | None:
    """None with --sandbox off: children run as plain processes."""
    return None if settings.sandbox == "off" else Confinement(hidden(settings))
