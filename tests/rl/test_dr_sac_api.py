"""DR-SAC's user-facing API: exact resume through state_dict and save/load, Stable-Baselines3's
env-scaled ``predict``, and the ``fit`` callback."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from optzoo.rl.dr_sac import DRSAC, DRSACConfig, OfflineData

pytest.importorskip("gymnasium")
import gymnasium as gym  # noqa: E402


def _data(n: int = 96, sd: int = 3, ad: int = 2, seed: int = 0) -> OfflineData:
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(n, sd, generator=g)
    a = torch.rand(n, ad, generator=g) * 2 - 1
    return OfflineData(s, a, torch.randn(n, generator=g),
                       s + 0.1 * torch.randn(n, sd, generator=g),
                       (torch.rand(n, generator=g) < 0.05).float())


def _cfg(robust: bool = True) -> DRSACConfig:
    return DRSACConfig(robust=robust, hidden=(16, 16), next_samples=6, batch_size=16,
                       model_pretrain_steps=4, lr_decay=0.99)


def _flat(agent: DRSAC) -> list[torch.Tensor]:
    out = []
    for m in (agent.actor, agent.q1, agent.q2, agent.v, agent.v_target, *(
            [agent.model, agent.g] if agent.cfg.robust else [])):
        out += [p.detach().clone() for p in m.state_dict().values()]
    return out + [agent.log_alpha.detach().clone()]


def _assert_same(a: DRSAC, b: DRSAC) -> None:
    assert a.steps == b.steps and a.model_steps == b.model_steps
    for x, y in zip(_flat(a), _flat(b), strict=True):
        assert torch.equal(x, y)
    for oa, ob in ((a.actor_opt, b.actor_opt), (a.q_opt, b.q_opt)):
        assert [g["lr"] for g in oa.param_groups] == [g["lr"] for g in ob.param_groups]


@pytest.mark.parametrize("robust", [True, False])
def test_state_dict_resume_equals_an_uninterrupted_run(robust):
    data = _data()
    straight = DRSAC(data, _cfg(robust), seed=3).fit(8)

    first = DRSAC(data, _cfg(robust), seed=3).fit(3)
    sd = first.state_dict()
    torch.manual_seed(12345)  # other code touching the global RNG in between
    resumed = DRSAC(data, _cfg(robust), seed=99)  # a different seed: everything is restored
    resumed.load_state_dict(sd)
    resumed.fit(5)
    _assert_same(straight, resumed)


def test_save_load_resume_equals_an_uninterrupted_run(tmp_path):
    data = _data()
    box = gym.spaces.Box(low=np.array([-2.0, 0.0], np.float32),
                         high=np.array([2.0, 1.0], np.float32))
    straight = DRSAC(data, _cfg(), seed=1, action_space=box).fit(7)
    part = DRSAC(data, _cfg(), seed=1, action_space=box).fit(4)
    path = tmp_path / "agent.pt"
    part.save(path)
    loaded = DRSAC.load(path)
    assert loaded.cfg == part.cfg
    np.testing.assert_array_equal(loaded.action_high, part.action_high)
    obs = data.states[:5].numpy()
    np.testing.assert_array_equal(loaded.predict(obs)[0], part.predict(obs)[0])
    loaded.fit(3)
    _assert_same(straight, loaded)
    # a file without its dataset needs data=
    part.save(tmp_path / "light.pt", include_data=False)
    with pytest.raises(ValueError, match="data"):
        DRSAC.load(tmp_path / "light.pt")
    assert DRSAC.load(tmp_path / "light.pt", data=data).steps == part.steps
    (tmp_path / "junk.pt").write_bytes(b"")
    with pytest.raises(Exception):  # noqa: B017 - torch's own unpickling error
        DRSAC.load(tmp_path / "junk.pt")


def test_load_state_dict_with_the_wrong_variant_names_what_is_missing():
    data = _data()
    with pytest.raises(ValueError, match="missing"):
        DRSAC(data, _cfg(True)).load_state_dict(DRSAC(data, _cfg(False)).state_dict())


def test_predict_returns_env_scaled_actions_like_stable_baselines3():
    data = _data()
    box = gym.spaces.Box(low=np.array([-2.0, 10.0], dtype=np.float32),
                         high=np.array([2.0, 20.0], dtype=np.float32))
    agent = DRSAC(data, _cfg(), seed=0, action_space=box).fit(2)
    obs = data.states[:7].numpy()
    action, state = agent.predict(obs, deterministic=True)
    assert state is None and action.shape == (7, 2) and action.dtype == np.float32
    a = agent.act(obs)
    assert np.all(np.abs(a) <= 1.0)
    np.testing.assert_allclose(action, box.low + 0.5 * (a + 1) * (box.high - box.low), rtol=1e-6)
    assert all(box.contains(x) for x in action)
    single, _ = agent.predict(obs[0])
    assert single.shape == (2,)
    # float32: a single row and a batch may take different matmul kernels (one ulp apart)
    np.testing.assert_allclose(single, action[0], rtol=1e-5, atol=1e-6)
    # Pendulum's space, and a (low, high) pair; None keeps [-1, 1]
    env = gym.make("Pendulum-v1")
    pend = DRSAC(_data(ad=1), _cfg(), action_space=env.action_space)
    assert np.all(np.abs(pend.predict(obs)[0]) <= 2.0)
    pair = DRSAC(data, _cfg(), seed=0, action_space=(box.low, box.high)).fit(2)
    np.testing.assert_array_equal(pair.predict(obs)[0], action)
    plain = DRSAC(data, _cfg(), seed=0).fit(2)
    np.testing.assert_allclose(plain.predict(obs)[0], plain.act(obs), atol=1e-7)
    with pytest.raises(ValueError, match="action_space"):
        DRSAC(data, _cfg(), action_space=(np.ones(2), np.zeros(2)))
    with pytest.raises(TypeError, match="action_space"):
        DRSAC(data, _cfg(), action_space="box")


def test_the_fit_callback_fires_every_n_total_steps_and_warns_when_it_cannot():
    data = _data()
    agent = DRSAC(data, _cfg(), seed=0)
    calls = []
    agent.fit(5, callback=lambda step, info: calls.append((step, sorted(info))), every=2)
    assert [c[0] for c in calls] == [2, 4]
    assert {"q_loss", "v_loss", "actor_loss", "alpha", "model_loss"} <= set(calls[0][1])
    agent.fit(3, callback=lambda step, info: calls.append((step, info)), every=2)
    assert [c[0] for c in calls] == [2, 4, 6, 8]  # counted over all calls
    with pytest.warns(UserWarning, match="callback will not fire"):
        agent.fit(2, callback=lambda step, info: None)  # every=1000 by default
    with pytest.raises(ValueError, match="every"):
        agent.fit(1, every=0)
    with pytest.raises(ValueError, match="steps"):
        agent.fit(-1)
