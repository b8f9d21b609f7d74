

def test_dummy_seconds_follow_the_declared_time(tmp_path):
    # the dry run's (and a rehearsal's) participants take the protocol's declared time, not 12 s whatever the study
    import numpy as np

    from humeval.simulate.dummy import DEFAULT_SECONDS, declared_seconds, draw_seconds
    from humeval.templates import init_study
    from humeval.study import Study

    init_study(tmp_path / "s", "pairwise", items=6)
    protocol = Study.open(tmp_path / "s").protocol
    assert protocol.pay.seconds_per_task == 20 and declared_seconds(protocol) == 20.0
    no_time = protocol.model_copy(update={"pay": protocol.pay.model_copy(update={"seconds_per_task": None,
                                                                                  "minutes_per_list": 6.0})})
    assert declared_seconds(no_time, 12) == 30.0  # 6 minutes over 12 tasks
    bare = no_time.model_copy(update={"pay": no_time.pay.model_copy(update={"minutes_per_list": None})})
    assert declared_seconds(bare, 12) == DEFAULT_SECONDS
    draws = draw_seconds(np.random.default_rng(1), 45.0, size=20_000)
    assert abs(np.median(draws) / 45.0 - 1) < 0.02  # log-normal around the median given
