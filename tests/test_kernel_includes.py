"""A CUDA source reads nothing it was not given: every spelling of an include the preprocessor
accepts (comments before and inside the directive, the ``%:`` digraph, splices inside the word,
``#include_next``, the same inside a header of the source's folder, a link out of it,
``__has_include``, a pasted ``__has_include``), and no byte of the file reaches stdout, stderr,
the JSON, the HTML page or an MCP answer; the compile's limits hold under a hard ``ulimit -v``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.kernel import includes, sandbox

import bankproof
from tests import kernel_cases as kc

SECRET = "BANKPROOF_SECRET_7c1e0d"
needs_nvrtc = pytest.mark.skipif(not kc.have_nvrtc(), reason="needs the cuda extra (NVRTC)")
KERNEL = (
    '\nextern "C" __global__ void k(float *o) { __shared__ float s[32]; s[threadIdx.x] = 1; o[0] = s[0]; }\n'
)


def _spellings(target: str) -> list[str]:
    """Every include spelling of ``target`` (an absolute path)."""
    return [
        f'#include "{target}"',
        f"#include <{target}>",
        f'/* before */ #include "{target}"',
        f'# /* inside */ include "{target}"',
        f'%:include "{target}"',
        f"%: /* x */ include <{target}>",
        f'#inc\\\nlude "{target}"',
        f'#in\\\r\nclude "{target}"',
        f'#\\\ninclude \\\n"{target}"',
        f'#include_next "{target}"',
        f'/*\n*/ #include "{target}"',
        f'#  include "{target}" // trailing',
        f'R"x(\n)x"\n#include "{target}"',
        f'int c = \' /*\n#include "{target}"\n// */',
        f'#if 0\n#include "{target}"\n#endif',
    ]


@pytest.fixture()
def secret(tmp_path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    f = outside / "secret.h"
    f.write_text(f"{SECRET} line one\n{SECRET} line two\n")
    return f


@pytest.mark.parametrize("i", range(15))
def test_every_spelling_is_seen(i):
    text = _spellings("/etc/passwd")[i]
    assert any(u.name == "/etc/passwd" for u in includes.uses(text)), text
    with pytest.raises(InputError, match="not given"):
        includes.gather(text + KERNEL, "k.cu")


def test_spellings_not_directives_are_not_refused():
    ok = [
        'const char *s = "#include \\"/etc/passwd\\"";',
        "int x; // #include </etc/passwd>",
        '/* #include "/etc/passwd" */',
        'auto r = R"(\n#include "/etc/passwd"\n)";',
        '#define S(x) #x\nint y; # include "/etc/passwd"',  # '#' not first on its line
    ]
    for text in ok[:-1]:
        assert includes.uses(text) == [], text
    assert [u.name for u in includes.uses(ok[-1])] == []


def test_has_include_answers_false_outside():
    v = includes.gather(
        '#if __has_include("/etc/passwd") || __has_include(<../x.h>)\n#error\n#endif\n', "k.cu"
    )
    assert v.source == "#if 0 || 0\n#error\n#endif\n"
    v = includes.gather("#if defined(__has_include)\n#ifdef __has_include\n#endif\n#endif\n", "k.cu")
    assert "__has_include" in v.source  # only named: left as it is
    with pytest.raises(InputError, match="literally"):
        includes.gather('#define P "/etc/passwd"\n#if __has_include(P)\n#endif\n', "k.cu")
    v = includes.gather('#if __has_include(\\\n"/etc/passwd")\n#endif\nint x;\n', "k.cu")
    assert v.source == "#if 0\n\n#endif\nint x;\n"  # the lines keep their numbers


def test_headers_of_the_folder(tmp_path, secret):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "good.h").write_text('#include "sub/deep.h"\n')
    (tmp_path / "src" / "sub").mkdir()
    (tmp_path / "src" / "sub" / "deep.h").write_text('#include "leaf.h"\n#define DEEP 1\n')
    (tmp_path / "src" / "sub" / "leaf.h").write_text("#define LEAF 2\n")
    v = includes.gather('#include "good.h"\n', "k.cu", tmp_path / "src")
    assert [n for n, _ in v.headers] == ["good.h", "leaf.h", "sub/deep.h"]
    (tmp_path / "src" / "bad.h").write_text(f'%:include "{secret}"\n')
    with pytest.raises(InputError, match="not given"):
        includes.gather('#include "bad.h"\n', "k.cu", tmp_path / "src")
    (tmp_path / "src" / "link.h").symlink_to(secret)
    with pytest.raises(InputError, match="link out of its folder"):
        includes.gather('#include "link.h"\n', "k.cu", tmp_path / "src")
    (tmp_path / "src" / "dir").symlink_to(secret.parent)
    with pytest.raises(InputError, match="link out of its folder"):
        includes.gather('#include "dir/secret.h"\n', "k.cu", tmp_path / "src")
    with pytest.raises(InputError, match="literally"):
        includes.gather("#define F <stdio.h>\n#include F\n", "k.cu")


def _run_cli(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bankproof.verifier.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env=env,
    )


@needs_nvrtc
@pytest.mark.compile
def test_no_byte_of_a_file_not_given_comes_out(tmp_path, secret):
    """Each spelling in the source and in a header of its folder: refused, and the secret nowhere."""
    src = tmp_path / "src"
    src.mkdir()
    cases = [s + KERNEL for s in _spellings(str(secret))]
    cases.append(f'#include "../outside/secret.h"{KERNEL}')
    cases.append(f'#line 1 "{secret}"\nint broken = ;{KERNEL}')
    for n, text in enumerate(cases):
        cu = src / f"k{n}.cu"
        cu.write_text(text)
        (src / f"h{n}.h").write_text(text)
        (src / f"i{n}.cu").write_text(f'#include "h{n}.h"\n')
        for name in (cu.name, f"i{n}.cu"):
            page = tmp_path / f"{name}.html"
            done = _run_cli(["kernel", name, "--block", "32", "--json", "--html", str(page)], src)
            assert done.returncode == 2, (text, done.stderr)
            assert SECRET not in done.stdout + done.stderr, text
            assert not page.exists() or SECRET not in page.read_text()


@needs_nvrtc
@pytest.mark.compile
def test_has_include_and_pasted_names_answer_false(tmp_path, secret):
    import bankproof

    pasted = f'#define CAT(a, b) a##b\n#if CAT(__has_, include)("{secret}")\n#error leaked\n#endif\n'
    plain = f'#if __has_include("{secret}")\n#error leaked\n#endif\n'
    for text in (plain, pasted):
        if text is pasted and not _landlock():
            continue  # without Landlock only the scan guards, and a pasted name escapes it
        r = bankproof.kernel(text + KERNEL, language="cuda", block=32)
        assert r.verdict == "proved"
    (tmp_path / "here.h").write_text("#define HERE 1\n")
    text = '#if !__has_include("here.h")\n#error missing\n#endif\n#include "here.h"\n'
    assert bankproof.kernel(tmp_path / _write(tmp_path, text + KERNEL), block=32).verdict == "proved"


def _write(folder: Path, text: str) -> str:
    (folder / "k.cu").write_text(text)
    return "k.cu"


def _landlock() -> bool:
    code = "from bankproof.verifier.kernel.sandbox import confine; print(confine([]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() == "True"


@needs_nvrtc
@pytest.mark.compile
def test_headers_given_as_content():
    import bankproof

    text = '#include "tile.h"\n' + KERNEL.replace("32]", "TILE]")
    r = bankproof.kernel(text, language="cuda", block=32, headers={"tile.h": "#define TILE 32\n"})
    assert r.verdict == "proved"
    with pytest.raises(InputError, match="headers"):
        bankproof.kernel(text, language="cuda", block=32, headers={"/etc/passwd": ""})


@needs_nvrtc
@pytest.mark.compile
def test_compile_answers_under_a_hard_address_space_limit(tmp_path):
    """``ulimit -v 4194304`` (4 GiB, soft and hard): the compile answers, the child asks no more."""
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    done = subprocess.run(
        [
            "bash",
            "-c",
            f"ulimit -v 4194304 && {sys.executable} -m bankproof.verifier.cli.main kernel k.cu --block 32",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "wavefronts" in done.stdout


def test_the_child_environment_is_stripped():
    env = sandbox.child_env({"PATH": "/bin", "GITHUB_TOKEN": "t", "HOME": "/h", "AWS_KEY": "k"}, ["/a", "/b"])
    assert (
        "GITHUB_TOKEN" not in env and "HOME" not in env and env["PYTHONPATH"] == os.pathsep.join(["/a", "/b"])
    )


def test_the_memory_limit_stays_under_the_hard_one():
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 33, 1 << 33));"
        "from bankproof.verifier.kernel.sandbox import memory_limit; memory_limit(1 << 40);"
        "print(resource.getrlimit(resource.RLIMIT_AS))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"({1 << 33}, {1 << 33})", done.stderr


def _variant(rng, target: str) -> str:
    """A random spelling of one include of ``target`` the preprocessor takes: comments and
    splices anywhere a token may be split or spaced, either hash, either directive, either quote."""

    def splice(word: str) -> str:
        out = []
        for ch in word:
            out.append(ch)
            if rng.random() < 0.15:
                out.append(rng.choice(["\\\n", "\\\r\n"]))
        return "".join(out)

    def gap() -> str:
        return "".join(
            rng.choice([" ", "\t", "/* c */", "/*\n*/", "\\\n", "\f"]) for _ in range(rng.randrange(0, 3))
        )

    lead = rng.choice(["", "  ", "/* x */ ", "/*\n\n*/", "\n"])
    hash_ = rng.choice(["#", "%:"])
    word = splice(rng.choice(["include", "include_next"]))
    name = f'"{target}"' if rng.random() < 0.5 else f"<{target}>"
    return lead + hash_ + gap().replace("\n*/", "*/") + word + (gap() or " ") + name + "\n"


@pytest.mark.fuzz
def test_include_spellings_fuzzed():
    """2,000 random spellings of an include of a file outside: every one is seen and refused; and
    2,000 random mutations of a source: the scan answers or refuses, nothing else."""
    import random

    from tests.fuzzing import mutate

    rng = random.Random(54)
    for _ in range(2000):
        text = _variant(rng, "/etc/passwd") + KERNEL
        with pytest.raises(InputError, match="not given"):
            includes.gather(text, "k.cu")
    good = '#include "a.h"\n#if __has_include(<cute/tensor.hpp>)\n#endif\n' + KERNEL
    for _ in range(2000):
        text = mutate(good, rng, rng.choice([1, 2, 3]))
        try:
            v = includes.gather(text, "k.cu")
        except InputError:
            continue
        assert "/etc" not in v.source


@pytest.mark.slow
def test_toolkit_headers_find_their_own_quoted_siblings():
    """cooperative_groups.h includes "info.h" beside itself: found (the compile once refused it),
    and the kernel's lines keep the source's own name."""
    pytest.importorskip("cuda.bindings")
    path = Path(__file__).resolve().parent / "data" / "cooperative_groups.cu"
    r = bankproof.kernel(str(path), block=64)
    assert [(i.location.line, i.wavefronts) for i in r.instructions] == [(9, 2), (11, 4)]
    assert r.instructions[1].location.file == str(path)
