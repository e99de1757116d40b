"""The Python reference: one page per public module, generated from its ``__all__`` when the build starts.

A public module is ``ssblab`` itself, each package below it and each module directly under ``ssblab``
(``ssblab.datasets``), when it declares ``__all__``. Each page documents the names the module owns with autodoc
and links the names it re-exports to the page that owns them, so nothing is described twice. New packages and new
names appear without an edit to the docs. The pages are written into ``docs/api/`` (not committed).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from sphinx.application import Sphinx

OUT = "api"


@dataclass
class Page:
    module: ModuleType
    own: list[str] = field(default_factory=list)
    reexported: dict[str, str] = field(default_factory=dict)  # name -> the documented target it links to

    @property
    def name(self) -> str:
        return self.module.__name__


def public_modules() -> list[ModuleType]:
    """``ssblab``, its packages and its direct modules that declare a non-empty ``__all__``, by name."""
    import ssblab

    names = ["ssblab"]
    for info in pkgutil.walk_packages(ssblab.__path__, "ssblab."):
        private = any(part.startswith("_") for part in info.name.split("."))
        if not private and (info.ispkg or info.name.count(".") == 1):
            names.append(info.name)
    modules = [importlib.import_module(name) for name in sorted(names)]
    return [module for module in modules if getattr(module, "__all__", None)]


def _home(obj: Any) -> str | None:
    return getattr(obj, "__module__", None) if callable(obj) or isinstance(obj, type) else None


def _owns(module: ModuleType, obj: Any) -> bool:
    home = _home(obj)
    return home is None or home == module.__name__ or home.startswith(module.__name__ + ".")


def plan() -> list[Page]:
    """Which page documents each public name, and which pages only link to it."""
    pages = [Page(module) for module in public_modules()]
    owner: dict[tuple[str, int], str] = {}  # (name, identity): a re-export keeps its name
    for page in sorted(pages, key=lambda p: -p.name.count(".")):  # the deepest package that holds it owns it
        for name in page.module.__all__:
            obj = getattr(page.module, name)
            if _owns(page.module, obj):
                owner.setdefault((name, id(obj)), f"{page.name}.{name}")
    for page in pages:
        for name in page.module.__all__:
            target = owner.get((name, id(getattr(page.module, name))), f"{page.name}.{name}")
            if target == f"{page.name}.{name}":
                page.own.append(name)
            else:
                page.reexported[name] = target
    return pages


def _directive(obj: Any) -> str:
    if isinstance(obj, type):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    return "autofunction" if callable(obj) else "autodata"


def render(page: Page) -> str:
    """The page: the module's docstring, then each name it owns (looked up by name, so lazy exports work)."""
    lines = [f"# {page.name}", "", "```{eval-rst}", f".. automodule:: {page.name}", ""]
    for name in page.own:
        obj = getattr(page.module, name)
        directive = _directive(obj)
        if directive == "autodata":  # a constant: its type, not the docstring of its type (dict's, str's)
            lines += [f".. py:data:: {page.name}.{name}", f"   :type: {type(obj).__name__}", ""]
            continue
        lines.append(f".. {directive}:: {page.name}.{name}")
        if directive in ("autoclass", "autoexception"):
            lines.append("   :members:")
        lines.append("")
    lines += ["```", ""]
    if page.reexported:
        lines += ["## Re-exported here", "", "These names are documented where they are defined:", ""]
        lines += [f"- {{py:obj}}`{name} <{target}>`" for name, target in page.reexported.items()]
        lines.append("")
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:  # untouched pages are not rebuilt
        path.write_text(text)


def generate(app: Sphinx) -> None:
    out = Path(app.srcdir) / OUT
    out.mkdir(exist_ok=True)
    pages = plan()
    for page in pages:
        _write(out / f"{page.name}.md", render(page))
    toc = "\n".join(page.name for page in pages)
    _write(out / "index.md", "# Python API\n\nEvery public module, generated from its docstrings and `__all__`.\n\n"
           f"```{{toctree}}\n:maxdepth: 1\n\n{toc}\n```\n")
    wanted = {f"{page.name}.md" for page in pages} | {"index.md"}
    for stale in out.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
