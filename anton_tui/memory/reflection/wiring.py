"""The parts of reflection and review for one project, made from its memory stores and settings: the review
pipeline, the reflection chain, the ACC's journal and the conversation summaries' files. The session's factory, the
app's Runtime and `anton-tui reflect` all build them here, so the three agree on where everything lives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from anton_tui.memory.episodes.summaries import SummaryFiles
from anton_tui.memory.learners.acc_journal import AccJournal
from anton_tui.memory.reflection.document import ReflectionFiles
from anton_tui.memory.reflection.runner import Reflector
from anton_tui.memory.review.book import ProposalBook
from anton_tui.memory.review.pipeline import ReviewPipeline, ReviewSettings, ReviewSettingsSource, local_now
from anton_tui.memory.review.targets import ChangeTargets

if TYPE_CHECKING:
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.stores import MemoryStores


class ReflectionSettings(ReviewSettingsSource, Protocol):
    """The settings reflection and review read (a subset of `anton_tui.config.Settings`): the review's, and how
    many messages make a day worth a reflection."""

    @property
    def reflection_min_messages(self) -> int: ...


@dataclass(frozen=True)
class ReflectionDefaults:
    """The defaults of the settings reflection reads, for parts made without settings."""

    review_level: str = "ai"
    review_tainted: str = "human"
    review_max_per_day: int = 10
    reflection_min_messages: int = 3


DEFAULTS = ReflectionDefaults()


@dataclass
class ReflectionParts:
    """Review and reflection of one project (see the module docstring)."""

    pipeline: ReviewPipeline
    reflector: Reflector
    journal: AccJournal
    summaries: SummaryFiles

    @classmethod
    def build(
        cls,
        stores: MemoryStores,
        cortex: Cortex,
        settings: ReflectionSettings,
        llm: Callable[[], LLMClient | None],
        clock: Callable[[], datetime] = local_now,
    ) -> ReflectionParts:
        """`llm()` is the model in use at the time (a session's changes with its settings)."""
        from anton_tui.memory.review.reviewer import AIReviewer

        paths = stores.paths
        pipeline = ReviewPipeline(
            ProposalBook(paths.review_book),
            ChangeTargets(stores, cortex),
            stores.recorder,
            ReviewSettings.of(settings),
            AIReviewer(llm),
            clock,
        )
        journal = AccJournal(paths.acc_journal, clock)
        summaries = SummaryFiles(paths.conversations)
        reflector = Reflector(
            ReflectionFiles(paths.reflections),
            episodes_dir=paths.episodes,
            skills=stores.skills,
            journal=journal,
            recorder=stores.recorder,
            summaries=summaries,
            llm=llm,
            pipeline=pipeline,
            min_messages=settings.reflection_min_messages,
            clock=clock,
        )
        return cls(pipeline, reflector, journal, summaries)

    def apply_settings(self, settings: ReflectionSettings) -> None:
        self.pipeline.settings = ReviewSettings.of(settings)
        self.reflector.min_messages = settings.reflection_min_messages
