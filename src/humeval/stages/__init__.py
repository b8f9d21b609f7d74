"""The pipeline's stages, one thin module each: ``(study, **options) -> StageOutput`` over library calls.

:mod:`humeval.pipeline` runs them (the lock check, input hashes, the logbook entry, the skip when
nothing changed); a stage module only reads the study's files, calls the library and writes its own.
:mod:`humeval.stages.back_half` chains collate -> exclude -> analyze -> report on one results folder
(dry runs, rehearsals) with the judgements read once.

A stage module imports its library calls inside its functions, so importing the pipeline (every command that
runs a stage) imports no data stack until a stage runs.
"""
