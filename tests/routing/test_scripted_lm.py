"""RFTHGS's loop with a code-writing LM, end to end on CPU: a *scripted* causal LM (a Hugging
Face ``PreTrainedModel`` + ``GenerationMixin`` whose logits force one of a few fixed
completions) goes through :class:`~optzoo.routing.lm_generator.LMGenerator` — prompt, sampling
with ``model.generate``, code-block extraction, per-token log-probs — and its code runs in HGS
**through the jail** (:class:`~optzoo.routing.rfthgs.SandboxEvaluator`, which refuses to run
without an operating-system jail), then takes its reward tier.

The model's only parameter is a logit per script: the first completion token is a marker
token drawn from softmax(logits) (a real choice, so GRPO has something to learn); every later
token is forced (log-prob 0).  Scripts:

* ``scored``: a valid code block (the grammar's SREX-like program, rendered) → "scored";
* ``echo``: the SREX port, i.e. the parent itself (the LM generator's expert) → "duplicate";
* ``runtime``: code that compiles but indexes past a list in HGS → "runtime";
* ``nocode``: prose without a code block → "compile" (never evaluated).

Run as the test's user and — through ``test_jail``'s ordinary-user runner (uid 65534 under
root, inside a mount namespace where root-only folders such as a 0700 pyenv are covered) —
as an ordinary user who loads the model with ``LMGenerator.from_pretrained`` from a 0700
folder of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
pyvrp = pytest.importorskip("pyvrp")

from transformers import (  # noqa: E402
    AutoConfig,
    AutoModelForCausalLM,
    GenerationMixin,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)
from transformers.modeling_outputs import CausalLMOutput  # noqa: E402

from optzoo.routing import jail  # noqa: E402
from optzoo.routing.code_corpus import srex_source  # noqa: E402
from optzoo.routing.crossover_dsl import EXPERT, render  # noqa: E402
from optzoo.routing.hgs import run_hgs  # noqa: E402
from optzoo.routing.instances import InstanceSpec, gap  # noqa: E402
from optzoo.routing.lm_generator import LMGenerator, build_prompt, extract_code  # noqa: E402
from optzoo.routing.operators import compile_operator, srex  # noqa: E402
from optzoo.routing.rfthgs import (  # noqa: E402
    RFTConfig,
    SandboxEvaluator,
    tiered_reward,
    train,
)
from optzoo.routing.sandbox import Limits  # noqa: E402

HERE = __name__
NEG = -1e9
ITERATIONS = 15
SPEC = InstanceSpec.generated(18, seed=4)
LIMITS = Limits(wall_s=120, cpu_s=60, memory_mb=1024)
RUNTIME_CODE = ("def crossover(parents, data, cost_evaluator, rng):\n"
                "    routes = parents[0].routes()\n"
                "    return routes[len(routes) + 5]\n")
SCRIPTS = {
    "scored": "Keep SREX's window, repair greedily.\n```python\n" + render(EXPERT) + "```\n",
    "echo": "Unchanged.\n```python\n" + srex_source() + "```\n",
    "runtime": "Take a route past the end.\n```python\n" + RUNTIME_CODE + "```\n",
    "nocode": "I would rather not write code today.",
}
TIERS = {"scored": "scored", "echo": "duplicate", "runtime": "runtime", "nocode": "compile"}


class ScriptedConfig(PretrainedConfig):
    model_type = "optzoo-scripted-lm"

    def __init__(self, vocab_size=1, scripts=(), markers=(), **kwargs):
        self.vocab_size = vocab_size
        self.scripts = [list(s) for s in scripts]
        self.markers = list(markers)
        super().__init__(**kwargs)


class ScriptedLM(PreTrainedModel, GenerationMixin):
    """Next token: before any marker, a marker drawn from softmax(``choice_logits``); after
    marker k at position m, token i of script k is forced at position m + i, then EOS."""

    config_class = ScriptedConfig
    main_input_name = "input_ids"

    def __init__(self, config):
        super().__init__(config)
        self.choice_logits = torch.nn.Parameter(torch.zeros(len(config.scripts)))
        self._tables = None
        self.post_init()
        self.generation_config.use_cache = False  # no KV cache: forward sees the whole text

    def _init_weights(self, module):
        pass  # choice_logits start at 0 (uniform over scripts); nothing else to initialise

    def _lookup(self, device):
        # built from the config on first use, not as buffers: from_pretrained creates the
        # model on the meta device and would leave non-persistent buffers uninitialised
        if self._tables is None or self._tables[0].device != device:
            cfg = self.config
            table = torch.full((len(cfg.scripts), max(map(len, cfg.scripts)) + 1),
                               cfg.eos_token_id, device=device)
            for k, s in enumerate(cfg.scripts):
                table[k, : len(s)] = torch.tensor(s, device=device)
            self._tables = table, torch.tensor(cfg.markers, device=device)
        return self._tables

    def forward(self, input_ids, attention_mask=None, logits_to_keep=0, **kwargs):
        table, marker_ids = self._lookup(input_ids.device)
        b, length = input_ids.shape
        hit = input_ids[..., None] == marker_ids  # (B, L, scripts)
        pos = torch.arange(length, device=input_ids.device).expand(b, length)
        last = torch.where(hit.any(-1), pos, -1).cummax(-1).values  # last marker so far
        script = hit.float().argmax(-1).gather(1, last.clamp(min=0))
        if logits_to_keep:
            last, script, pos = (t[:, -logits_to_keep:] for t in (last, script, pos))
        step = (pos - last + 1).clamp(max=table.shape[1] - 1)
        token = table[script, step]
        vocab = self.config.vocab_size
        forced = torch.full((*token.shape, vocab), NEG, device=input_ids.device)
        forced = forced.scatter(-1, token[..., None], 0.0)
        choice = torch.full((vocab,), NEG, device=input_ids.device).index_put(
            (marker_ids,), self.choice_logits)
        return CausalLMOutput(logits=torch.where((last < 0)[..., None],
                                                 choice.expand_as(forced), forced))


AutoConfig.register(ScriptedConfig.model_type, ScriptedConfig, exist_ok=True)
AutoModelForCausalLM.register(ScriptedConfig, ScriptedLM, exist_ok=True)


def scripted_lm() -> tuple[ScriptedLM, PreTrainedTokenizerFast]:
    """The scripted model and a byte-level BPE tokenizer trained on its texts and the prompt
    (markers and EOS are special tokens: decoding skips them)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    special = ["<|endoftext|>"] + [f"<|{name}|>" for name in SCRIPTS]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1200, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([*SCRIPTS.values(), build_prompt(srex_source())], trainer)
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")
    markers = [hf.convert_tokens_to_ids(f"<|{name}|>") for name in SCRIPTS]
    scripts = [[m, *hf(text, add_special_tokens=False).input_ids]
               for m, text in zip(markers, SCRIPTS.values(), strict=True)]
    cfg = ScriptedConfig(vocab_size=len(hf), scripts=scripts, markers=markers,
                         eos_token_id=hf.eos_token_id, pad_token_id=hf.eos_token_id,
                         bos_token_id=hf.eos_token_id, use_cache=False)
    return ScriptedLM(cfg).eval(), hf


def _max_new_tokens(model) -> int:
    return max(len(s) for s in model.config.scripts) + 2


def _which(completion_text: str) -> str:
    """The script a decoded completion is (the marker itself is skipped by decoding)."""
    return next(name for name, text in SCRIPTS.items() if completion_text == text)


class _Recorder:
    """An evaluator that remembers every outcome (train() memoises, so one run per source)."""

    def __init__(self, inner):
        self.inner, self.outcomes, self.calls = inner, {}, 0

    def __call__(self, source, instances, seed):
        self.calls += 1
        out = self.inner(source, instances, seed)
        self.outcomes[source] = out
        return out


class _Recording(LMGenerator):
    """LMGenerator that keeps what it proposed, to check each completion's tier afterwards."""

    proposed: list

    def propose(self, parent, n, generator):
        out = super().propose(parent, n, generator)
        self.proposed = [*getattr(self, "proposed", []), *out]
        return out


def _reference():
    data = SPEC.load()
    ref = run_hgs(data, srex, iterations=200, seed=0).cost()
    base = gap(run_hgs(data, srex, iterations=ITERATIONS, seed=7).cost(), ref)
    return data, ref, base


def test_scripted_lm_writes_code_that_runs_in_hgs_through_the_jail():
    box, why = jail.probe()
    assert box is not None, f"no operating-system jail here ({why}): the test needs one"
    model, tok = scripted_lm()
    gen = _Recording(model, tok, max_new_tokens=_max_new_tokens(model))
    data, ref, base = _reference()
    evaluator = _Recorder(SandboxEvaluator([SPEC], [ref], ITERATIONS, limits=LIMITS))
    before = torch.softmax(model.choice_logits.detach().clone(), 0)
    cfg = RFTConfig(steps=1, prompts=1, group=8, instances_per_reward=1, ppo_epochs=1, lr=0.5)
    # the draw of 8 completions is fixed by the seed; seeds whose group misses a script are
    # skipped here (bounded), so the test always sees all four tiers in one group
    for seed in range(20):
        names = {_which(c.text) for c in gen.generate(build_prompt(srex_source()), 8,
                                                    torch.Generator().manual_seed(seed))}
        if names == set(SCRIPTS):
            break
    else:
        pytest.fail("no seed < 20 drew all four scripts in a group of 8")
    # train() seeds its torch generator with `seed` and first uses it in propose(): the same
    # eight completions
    gen.proposed = []
    out = train(evaluator, [base], cfg, seed=seed, policy=gen, expert=None)
    parent = out["cache"].entries[0]
    assert parent.source == srex_source() and parent.program is None  # the SREX port
    assert len(gen.proposed) == 8
    tiers = {}
    for completion, code in gen.proposed:
        name = _which(completion.text)
        outcome = ({"status": "syntax_error", "source": ""} if code is None
                   else evaluator.outcomes[code])
        _, tiers[name] = tiered_reward(outcome, parent.source, [base], cfg.reward)
    assert tiers == TIERS, tiers
    # the nocode completion was never evaluated; the three code blocks ran once each
    assert set(evaluator.outcomes) == {SCRIPTS[k].split("```python\n")[1].split("```")[0]
                                       for k in ("scored", "echo", "runtime")}
    assert evaluator.calls == 3
    ran = evaluator.outcomes[render(EXPERT)]
    assert ran["status"] == "ok" and all(abs(g) < 100 for g in ran["gaps"])
    assert "IndexError" in evaluator.outcomes[RUNTIME_CODE]["reason"]
    h = out["history"][0]
    assert h["compile_frac"] > 0 and h["runtime_frac"] > 0 and h["duplicate_frac"] > 0
    # one GRPO step moved probability towards the best tier (scored) and away from nocode
    after = torch.softmax(model.choice_logits.detach(), 0)
    names = list(SCRIPTS)
    assert after[names.index("scored")] > before[names.index("scored")]
    assert after[names.index("nocode")] < before[names.index("nocode")]


def test_token_log_probs_of_the_scripted_lm_are_known_in_closed_form():
    model, tok = scripted_lm()
    with torch.no_grad():
        model.choice_logits.copy_(torch.tensor([1.0, 0.0, -1.0, 0.5]))
    gen = LMGenerator(model, tok, max_new_tokens=_max_new_tokens(model), top_k=len(tok),
                      top_p=1.0)
    comps = gen.generate(build_prompt(srex_source()), 6, torch.Generator().manual_seed(3))
    with torch.no_grad():
        logp, mask = gen.token_log_probs([None] * 6, comps)
    log_choice = torch.log_softmax(model.choice_logits.detach(), 0)
    names = list(SCRIPTS)
    for i, c in enumerate(comps):
        k = names.index(_which(c.text))
        n = len(model.config.scripts[k]) + 1  # marker, text, EOS
        assert int(mask[i].sum()) == n == len(c.completion_ids)
        assert float(logp[i, 0]) == pytest.approx(float(log_choice[k]), abs=1e-6)
        assert torch.all(logp[i, 1:n].abs() < 1e-6) and torch.all(logp[i, n:] == 0)
    torch.testing.assert_close(gen.sequence_log_probs([None] * 6, comps).detach(),
                               (logp * mask).sum(-1))
    assert mask.shape[1] == max(len(c.completion_ids) for c in comps)


def test_jailed_gap_equals_the_in_process_run():
    data, ref, base = _reference()
    ev = SandboxEvaluator([SPEC], [ref], ITERATIONS, limits=LIMITS)
    res = ev(render(EXPERT), [0], 7)
    assert res["status"] == "ok"
    local = run_hgs(data, compile_operator(EXPERT), iterations=ITERATIONS, seed=7).cost()
    assert res["gaps"][0] == pytest.approx(gap(local, ref), abs=1e-9)
    # and the SREX port in the jail is C++ SREX: its gap is the baseline's
    assert ev(srex_source(), [0], 7)["gaps"][0] == pytest.approx(base, abs=1e-9)


# --------------------------------------------------------------------------- ordinary user

def _as_user_report(ctx: dict) -> dict:
    """Run by ``test_jail``'s ordinary-user script: the model is saved to and loaded from a
    0700 folder of this user with ``LMGenerator.from_pretrained``; its four scripts are
    evaluated through the jail."""
    box, why = jail.probe()
    home = tempfile.mkdtemp(prefix="oz-lm-home-")
    os.chmod(home, 0o700)
    try:
        model, tok = scripted_lm()
        folder = os.path.join(home, "scripted-lm")
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        gen = LMGenerator.from_pretrained(folder, max_new_tokens=_max_new_tokens(model))
        data, ref, base = _reference()
        ev = SandboxEvaluator([SPEC], [ref], ITERATIONS, limits=LIMITS)
        parent = srex_source()
        tiers, seen = {}, {}
        for seed in range(20):
            for completion in gen.generate(build_prompt(parent), 8,
                                           torch.Generator().manual_seed(seed)):
                name = _which(completion.text)
                if name in tiers:
                    continue
                code = extract_code(completion.text)
                out = ({"status": "syntax_error", "source": ""} if code is None
                       else ev(code, [0], 7))
                tiers[name] = tiered_reward(out, parent, [base])[1]
                seen[name] = out["status"]
            if len(tiers) == len(SCRIPTS):
                break
        return {"uid": os.geteuid(), "jail": box.name if box else why, "tiers": tiers,
                "statuses": seen, "home_mode": oct(os.stat(home).st_mode & 0o777),
                "loaded": type(gen.model).__name__}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_scripted_lm_through_the_jail_as_an_ordinary_user_from_a_0700_folder():
    """No skip as root or not: under root the runner drops to uid 65534 inside a mount
    namespace (root-only folders covered), otherwise it runs as the test's own user."""
    import importlib

    test_jail = importlib.import_module(HERE.rsplit(".", 1)[0] + ".test_jail")
    cfg = {"uid": jail.NOBODY, "module": HERE, "ctx": {"secret": "unused"},
           "sys_path": [os.path.abspath(p) for p in sys.path if isinstance(p, str)]}
    proc = subprocess.run(test_jail._user_command(cfg), capture_output=True, text=True,
                          timeout=500, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["uid"] != 0 and "user namespace" in report["jail"], report
    assert report["home_mode"] == "0o700" and report["loaded"] == "ScriptedLM", report
    assert report["tiers"] == TIERS, report
    assert report["statuses"] == {"scored": "ok", "echo": "ok", "runtime": "runtime_error",
                                  "nocode": "syntax_error"}, report
