"""Every error lit-sb3 raises on purpose, in one tree, so callers can catch by meaning.

Each class also derives from the built-in exception that code written for Stable-Baselines3 or plain Python
would expect (``KeyError`` for an unknown name, ``ValueError`` for a bad value, ``ImportError`` for a
missing plugin), so existing ``except`` clauses keep working::

    LitSb3Error(Exception)
    ├── CliError                               bad input to a lit-sb3 command (exit status 2)
    ├── RegistryError                          the registry could not answer
    │   ├── UnknownNameError(KeyError)         no algorithm/policy/callback/buffer by that name
    │   ├── AmbiguousNameError(KeyError)       a bare name that two plugins provide
    │   ├── RegistrationError(ValueError)      a malformed registration (bad name or target)
    │   │   └── DuplicateNameError             the name is taken and override=True was not given
    │   ├── TargetImportError(ImportError)     a registered "module:attr" target failed to import
    │   └── MissingPluginError(ImportError)    an SB3 class name whose plugin is not installed
    ├── PluginError                            a plugin could not be loaded or registered
    ├── ConfigurationError(ValueError)         inconsistent arguments or configuration
    │   ├── DisallowedNameError                a class named in a file or config that is not allowed
    │   └── PolicyKwargsError(TypeError)       policy_kwargs the policy cannot be called with
    ├── EnvError(ValueError)                   an environment that cannot be used as given
    │   └── EnvTimeoutError                    an env that did not return from step/reset in time
    ├── NonFiniteError(ValueError)             NaN or infinity in observations, rewards or actions
    └── ModelFileError(ValueError)             a model file that cannot be loaded (wrong algorithm/spaces)

Messages say what was asked, what exists and how to fix it; the structured parts are kept as attributes.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

__all__ = [
    "AmbiguousNameError",
    "CliError",
    "ConfigurationError",
    "ConflictingOptionsError",
    "DisallowedNameError",
    "DuplicateNameError",
    "EnvCheckError",
    "EnvCountError",
    "EnvError",
    "EnvTimeoutError",
    "EnvTypeError",
    "EvalEnvMismatchError",
    "ImageSpaceError",
    "InvalidArgumentError",
    "LitSb3Error",
    "MissingActionMasksError",
    "MissingPluginError",
    "ModelFileError",
    "NestedSpaceError",
    "NonFiniteError",
    "PluginError",
    "PolicyKwargsError",
    "RegistrationError",
    "RegistryError",
    "TargetImportError",
    "UnknownNameError",
    "UnsupportedSpaceError",
]


def _rebuild(cls: type[LitSb3Error], args: tuple[Any, ...], state: dict[str, Any]) -> LitSb3Error:
    """Recreate an error without calling its ``__init__`` (whose signature may differ from ``args``)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class LitSb3Error(Exception):
    """Root of every error lit-sb3 raises deliberately."""

    def __str__(self) -> str:
        # Bypass KeyError.__str__, which would wrap the message in quotes.
        return Exception.__str__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take structured constructor arguments; pickle by state so errors survive
        # multiprocessing (async vector envs, DDP workers).
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class CliError(LitSb3Error):
    """Bad input to a command: printed as one ``lit-sb3 <command>: error: ...`` line, exit status 2."""


class RegistryError(LitSb3Error):
    """The registry could not resolve, import or record an algorithm, policy, callback or buffer."""


class UnknownNameError(RegistryError, KeyError):
    """No registration matches the name asked for.

    Attributes:
        kind: What was looked up ("algorithm", "callback", ...).
        name: The name as asked.
        available: The names that do exist, sorted.
        suggestions: Close matches among ``available`` and the ``installable`` names.
        distribution: The first-party distribution that provides ``name`` (or the suggestion), if any.
        problems: One line per plugin that was not loaded (failed, incompatible or blocked).
    """

    def __init__(
        self,
        kind: str,
        name: str,
        available: Sequence[str],
        *,
        installable: Sequence[str] = (),
        distribution: str | None = None,
        distribution_note: str | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        candidates = [n for n in dict.fromkeys([*self.available, *installable]) if n != name.lower()]
        self.suggestions = difflib.get_close_matches(name.lower(), candidates, n=3, cutoff=0.6)
        self.distribution = distribution
        self.problems = list(problems)
        lines = [f"Unknown {kind} {name!r}."]
        if self.suggestions:
            lines[0] += " Did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        if distribution is not None:
            lines.append(
                distribution_note
                or f"{name!r} is provided by the first-party plugin {distribution}: "
                f"pip install {distribution}"
            )
        if self.available:
            plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
            lines.append(f"Available {plural}: {', '.join(self.available)}.")
        elif distribution is None and kind == "algorithm":
            lines.append(
                "No algorithms are registered: install a plugin, for example pip install lit-sb3-ppo"
            )
        else:
            lines.append(f"No {kind}s are registered.")
        if self.problems:
            lines.append("Plugins that were not loaded (see `lit-sb3 plugins`):")
            lines.extend(f"  - {problem}" for problem in self.problems)
        super().__init__("\n".join(lines))


class AmbiguousNameError(RegistryError, KeyError):
    """A bare name that several plugins provide; ``"<plugin>/<name>"`` picks one.

    Attributes:
        kind: What was looked up.
        name: The bare name as asked.
        providers: ``(plugin, distribution)`` for each plugin that provides it.
    """

    def __init__(self, kind: str, name: str, providers: Sequence[tuple[str, str]]) -> None:
        self.kind = kind
        self.name = name
        self.providers = list(providers)
        described = ", ".join(
            f"plugin {plugin!r}" + (f" ({distribution})" if distribution else "")
            for plugin, distribution in providers
        )
        qualified = " or ".join(f"{plugin}/{name}" for plugin, _ in providers)
        blocks = ",".join(plugin for plugin, _ in providers)
        super().__init__(
            f"The {kind} name {name!r} is ambiguous: it is provided by {described}. "
            f"Ask for {qualified}, or leave one plugin out with LIT_SB3_BLOCK_PLUGINS (one of {blocks})."
        )


class RegistrationError(RegistryError, ValueError):
    """A registration is malformed: an invalid name, or a target that is not ``"module:attr"`` or a class."""


class DuplicateNameError(RegistrationError):
    """The name is already registered and ``override=True`` was not given.

    Attributes:
        kind: What was registered.
        name: The name.
        existing: Who already provides it (plugin names).
    """

    def __init__(self, kind: str, name: str, existing: Sequence[str]) -> None:
        self.kind = kind
        self.name = name
        self.existing = list(existing)
        super().__init__(
            f"The {kind} name {name!r} is already registered by {', '.join(repr(e) for e in existing)}. "
            f"Pass override=True to replace it for the bare name, or choose another name."
        )


class TargetImportError(RegistryError, ImportError):
    """A registered ``"module:attr"`` target could not be imported; the message names the owning plugin."""


class MissingPluginError(RegistryError, ImportError):
    """``lit_sb3.<ClassName>`` was asked for, but no installed plugin provides that class."""


class PluginError(LitSb3Error):
    """A plugin could not be loaded or registered (import failure, unknown hook, incompatible core)."""


class ConfigurationError(LitSb3Error, ValueError):
    """Arguments or configuration values that contradict each other or cannot be used.

    Attributes:
        field: The argument at fault when one is (``"vf_coef"``, ``"policy_kwargs.activation_fn"``), so a
            loader can name it inside the file it came from; None otherwise.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class DisallowedNameError(ConfigurationError):
    """A class or function named in a model file, checkpoint, config or CLI flag that is not allowed.

    Names that come from outside resolve through the registry's allow-list only, checked before anything
    is imported (importing a module runs its code). The message names the field, the value, why it was
    refused and what is allowed.

    Attributes:
        kind: What was asked for ("activation", "features_extractor", "optimizer", "policy", ...).
        field: Where the name was found, e.g. ``"policy_kwargs.activation_fn"``.
        value: The name as given.
        allowed: The registered names of that kind.
    """

    def __init__(self, message: str, *, kind: str, field: str, value: Any, allowed: Sequence[str]) -> None:
        self.kind = kind
        self.value = value
        self.allowed = list(allowed)
        super().__init__(message, field=field)


class ConflictingOptionsError(ConfigurationError, AssertionError):
    """Two options that cannot be used together (``squash_output=True`` without ``use_sde=True``).

    Also an ``AssertionError``, the type SB3 asserts these with, so code written against SB3 catches it.
    """


class UnsupportedSpaceError(ConfigurationError, AssertionError):
    """An algorithm, buffer or distribution given a space it does not take, store or model (Discrete actions
    to SAC, a Box space to a Dict buffer).

    Also an ``AssertionError``, the type SB3 asserts these with, so code written against SB3 catches it.
    """


class EnvCountError(ConfigurationError, AssertionError):
    """``set_env`` with another number of environments than the model trains on (SB3 asserts the same
    count there; ``load(..., env=...)`` and ``learn(..., n_envs=...)`` may change it)."""


class ImageSpaceError(ConfigurationError, AssertionError):
    """A CNN features extractor (``CnnPolicy``) given observations that are not images of the kind it takes
    (SB3's NatureCNN asserts there)."""


class InvalidArgumentError(ConfigurationError, AssertionError):
    """An argument outside the values it may take where SB3 asserts them (``VecFrameStack``'s
    ``channels_order="sideways"``); also an ``AssertionError`` so code written against SB3 catches it."""


class PolicyKwargsError(ConfigurationError, TypeError):
    """``policy_kwargs`` that the policy class cannot be called with: an argument it does not take, or one
    the algorithm passes itself (an on-policy ``use_sde``). Also a ``TypeError``, which SB3's call of the
    policy class raises for them."""


class NestedSpaceError(ConfigurationError, NotImplementedError):
    """A Dict or Tuple space inside a Dict or Tuple observation space, which the policies do not take; also a
    ``NotImplementedError``, the type SB3 raises for it."""


class EnvError(LitSb3Error, ValueError):
    """An environment (id, instance, factory or vector env) that cannot be used as given."""


class MissingActionMasksError(EnvError, AttributeError):
    """Masking was asked for but the env (or a sub-env) has no ``action_masks()`` method; a ``ValueError``
    as sb3-contrib raises, and an ``AttributeError`` as the missing method is one."""


class EvalEnvMismatchError(EnvError, TypeError, AssertionError):
    """An ``EvalCallback`` whose ``eval_env`` is not wrapped as the training env (``VecNormalize`` on the
    training env only), so its observations would not be normalized; also an ``AssertionError``, as SB3's
    ``sync_envs_normalization`` asserts, so code written against SB3 catches it."""


class EnvCheckError(EnvError, AssertionError):
    """``check_env`` found an env that breaks the gymnasium API; an ``AssertionError`` too, as SB3's
    ``check_env`` raises one, so code written against SB3 catches it."""


class EnvTypeError(EnvCheckError, TypeError):
    """``check_env`` was given something that is not a gymnasium env, spaces that are not gymnasium spaces,
    or a ``reset()`` that does not accept ``seed``: a ``TypeError`` by nature, and an ``AssertionError`` as
    every ``check_env`` finding (SB3 asserts the first two and raises ``TypeError`` for the third)."""


class EnvTimeoutError(EnvError):
    """An environment did not return from ``step`` or ``reset`` within ``RLEnvDataModule(step_timeout=...)``.

    Attributes:
        env_index: the env that hung, when known (its position in the vector env).
        call: ``"step"`` or ``"reset"``.
        timeout: the limit, in seconds.
        step: the vector step (since the vector env was built) at which it hung.
    """

    def __init__(
        self, message: str, *, env_index: int | None, call: str, timeout: float, step: int | None = None
    ) -> None:
        self.env_index = env_index
        self.call = call
        self.timeout = timeout
        self.step = step
        super().__init__(message)


class NonFiniteError(LitSb3Error, ValueError):
    """NaN or infinity where finite numbers are needed: what an env returned, or what a diverged policy did.

    Raised by ``RLEnvDataModule(check_finite=True)`` (SB3's ``VecCheckNan``) and when training stops on
    non-finite values.

    Attributes:
        what: ``"observation"``, ``"reward"``, ``"final observation"``, ``"action"`` or ``"parameters"``.
        env_index: the env that returned (or was given) the value, when one is known.
        action: the action that env was given, when known.
        step: the vector step (since the guard started) at which it happened, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        what: str,
        env_index: int | None = None,
        action: Any = None,
        step: int | None = None,
    ) -> None:
        self.what = what
        self.env_index = env_index
        self.action = action
        self.step = step
        super().__init__(message)


class ModelFileError(LitSb3Error, ValueError):
    """A model file or checkpoint that cannot be loaded: unsafe, corrupt, tampered, another algorithm, other
    spaces. The message starts with the file and names the field at fault.

    Attributes:
        path: The file (or URL) as given, when known.
        field: The entry at fault (``"num_timesteps"``, ``"hyperparameters.policy_kwargs.activation_fn"``,
            ``"weights.policy.value_net.weight"``), when there is one.
    """

    def __init__(self, message: str, *, path: Any = None, field: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.field = field
        super().__init__(message)
