"""Default modes follow the backend: NumPy has no AD, so its defaults are its differences
and complex step, while a mode asked for by name is still refused with the reason."""

import pytest

import adlab
from adlab.measure import DEFAULT_MODES, default_modes


def test_default_modes_keep_what_the_backend_runs():
    assert default_modes() == DEFAULT_MODES == default_modes("jax")
    numpy = default_modes("numpy")
    assert numpy and all(m.startswith(("numeric", "complex-step")) for m in numpy)
    assert set(numpy) == {m for m in DEFAULT_MODES if m.startswith(("numeric", "complex"))}


# a loaded test machine warns that it is noisy: no failure of what is tested here
@pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")
def test_advise_on_numpy_with_default_modes_measures_its_modes():
    advice = adlab.advise("normal_logpdf", 3, backend="numpy", budget_s=0.5, repeats=3)
    measured = {r.mode for r in advice.records if r.mode != "primal"}
    assert measured and measured <= {"numeric", "complex-step"}
    assert advice.best is not None


def test_a_named_mode_numpy_lacks_is_still_refused():
    with pytest.raises(Exception, match="does not have"):
        adlab.advise("normal_logpdf", 3, "reverse", backend="numpy", budget_s=0.5)
