"""How a program draws in the sandbox: matplotlib on Agg, and plt.show() keeps the figures.

Installed into the runtime tree by runtime/build.sh (as dist-packages/codeblanks_drawing.py,
with a .pth line that imports it as Python starts), so it runs in every backend alike and
before any code of the run. Importing it must stay cheap: it loads nothing but what Python
has loaded already, and registers an import hook that acts only when the program (or the
warm zygote) imports matplotlib:
- before matplotlib runs, the font list built with the tree (build.sh) is copied into
  $MPLCONFIGDIR, the run's own, so that matplotlib never scans the fonts again (~1 s);
- after it, the backend is this module's (Agg, no GUI toolkit is in the tree) whatever the
  program asks: matplotlib.use() and plt.switch_backend() keep it;
- this backend's plt.show() saves each open figure as a PNG in SHOWN (at most MOST_SHOWN;
  past that an empty file only counts one) and closes it, as a notebook shows its figures.
Every PNG this canvas writes (plt.show()'s and the program's own savefig) carries its text
alternative, the figure's titles and axis labels, as its PNG "Description": plain text the
host reads, bounds and escapes (workers/sandbox/reencoding.py); the host re-encodes every
figure and serves nothing as it came from here. Nothing here is trusted by the host.
"""

import os
import sys

BACKEND = "module://codeblanks_drawing"
SHOWN = "/tmp/.codeblanks-figures"  # core/figures.py SHOWN_DIR
MOST_SHOWN = 4  # core/figures.py MAX_FIGURES
FONT_CACHE = "/usr/share/codeblanks/matplotlib"  # fontlist-v*.json, made by runtime/build.sh
ALT_CHARS = 300  # core/figures.py MAX_ALT
_shown = 0


class _Finder:
    """Find matplotlib and matplotlib.pyplot as Python would, and act around their import."""

    def find_spec(self, name, path=None, target=None):
        after = _AFTER.get(name)
        if after is None:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        if name == "matplotlib":
            _seed_font_cache()
        spec.loader = _Then(spec.loader, after)
        return spec


class _Then:
    """A module's own loader, then one more step once the module has run."""

    def __init__(self, loader, after):
        self._loader, self._after = loader, after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._after(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)  # get_data, get_filename, is_package, ...


def _seed_font_cache():
    target = os.environ.get("MPLCONFIGDIR")
    if not target or not os.path.isdir(FONT_CACHE):
        return
    try:
        os.makedirs(target, mode=0o700, exist_ok=True)
        for name in os.listdir(FONT_CACHE):
            copy = os.path.join(target, name)
            if not os.path.exists(copy):
                with open(os.path.join(FONT_CACHE, name), "rb") as src, open(copy, "wb") as dst:
                    dst.write(src.read())
    except OSError:
        pass  # a full /tmp: matplotlib builds its font list itself, slowly but right


def _after_matplotlib(mpl):
    mpl.rcParams["backend"] = BACKEND

    def use(backend, *, force=True):
        """Keep the sandbox's backend (Agg): no window can open here, and plt.show() keeps
        the figures; savefig picks its format from the file name whatever the backend."""

    mpl.use = use


def _after_pyplot(plt):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    class FigureCanvas(FigureCanvasAgg):
        """Agg, whose PNGs carry the figure's text alternative."""

        def print_png(self, filename_or_obj, *args, metadata=None, pil_kwargs=None, **_):
            # savefig hands a third party's print_png its options (facecolor, dpi, ...),
            # which Agg's own takes from the figure it prepared: they go no further
            alt = describe(self.figure)
            given = {"Description": alt} if alt else {}
            given.update(metadata or {})
            return super().print_png(filename_or_obj, *args, metadata=given, pil_kwargs=pil_kwargs)

    globals()["FigureCanvas"] = FigureCanvas
    real_switch = plt.switch_backend

    def switch_backend(newbackend):
        """Close the figures, as matplotlib does, and keep the sandbox's backend."""
        real_switch(BACKEND)

    plt.switch_backend = switch_backend


_AFTER = {"matplotlib": _after_matplotlib, "matplotlib.pyplot": _after_pyplot}


def show(*args, **kwargs):
    """Keep every open figure as a PNG for the run's result, and close it."""
    global _shown
    from matplotlib._pylab_helpers import Gcf

    for manager in Gcf.get_all_fig_managers():
        _shown += 1
        os.makedirs(SHOWN, mode=0o700, exist_ok=True)
        path = os.path.join(SHOWN, f"figure-{_shown:02d}.png")
        if _shown > MOST_SHOWN:
            open(path, "wb").close()  # counted as one too many, never drawn
        else:
            manager.canvas.figure.savefig(path, format="png")
    Gcf.destroy_all()


def describe(figure):
    """Say what a figure shows in a line: its titles and its axes' labels, bounded."""
    parts = []
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(suptitle.get_text())
    for axes in figure.axes:
        bits = [axes.get_title(loc) for loc in ("left", "center", "right")]
        label_x, label_y = axes.get_xlabel(), axes.get_ylabel()
        if label_x:
            bits.append(f"x: {label_x}")
        if label_y:
            bits.append(f"y: {label_y}")
        line = ", ".join(bit for bit in bits if bit)
        if line:
            parts.append(line)
    text = " ".join("; ".join(parts).split())
    return text[:ALT_CHARS]


sys.meta_path.insert(0, _Finder())
