"""Starting up: what the first frame shows, read at once from the raw settings' sources, and the `Runtime` built
right after it (validated settings, memory stores, session), meant to run off the event loop.

There is one start path. The app paints its first frame from `RuntimeStarter.first_frame` (no pydantic, no SDK) and
then calls `build()` in a worker. A bad setting raises `SettingsError` there; `settings_for_setup()` then gives
settings without the bad values, so the setup screen can open and fix them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anton_tui.settings_sources import EnvLayers, FirstFrame, SettingsError, read_env_layers

if TYPE_CHECKING:
    from anton_tui.config import Settings
    from anton_tui.runtime.first_look import FirstLook
    from anton_tui.runtime.runtime import Runtime

DEMO_PROVIDER = "demo"
SETUP_ATTEMPTS = 20  # bad values dropped, at most, to open the setup screen


class RuntimeStarter:
    """Builds the `Runtime` for one project's settings' sources; `theme` overrides the theme setting for this run,
    and `demo` builds the recorded demo in a throw-away folder instead. `resume` names a saved conversation to
    continue once the runtime is built ("" for the newest one, "?" to choose from the list); the app does that.
    `skills` are preloaded for the conversation (``--skill``): in its first request and every one after."""

    def __init__(
        self, layers: EnvLayers, *, theme: str | None = None, demo: bool = False, resume: str | None = None,
        skills: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.layers = layers
        self.theme = theme
        self.demo = demo
        self.resume = resume
        self.skills = skills

    @property
    def first_frame(self) -> FirstFrame:
        frame = FirstFrame.from_layers(self.layers)
        changes: dict[str, Any] = {}
        if self.theme:
            changes["theme"] = self.theme
        if self.demo:
            from anton_tui.agent.demo import DEMO_MODEL

            changes |= {"planning_provider": DEMO_PROVIDER, "planning_model": DEMO_MODEL}
            changes["effective_memory_mode"] = "autopilot"
        return FirstFrame(**{**frame.__dict__, **changes})

    def preview(self) -> tuple[str, list[Any]] | None:
        """The conversation `resume` names (or the newest one), read straight from its saved file: `(session id,
        transcript entries)` for the chat to show while the runtime is built, which is most of the wait. None when
        it cannot be shown that way (the demo, the list to choose from, no saved file, one that does not parse):
        the resume after the build then says why, as without a preview. Blocking: run it in a thread."""
        if self.demo or self.resume is None or self.resume == "?":
            return None
        from anton_tui.agent.conversations import transcript
        from anton_tui.agent.history_store import HistoryBroken, HistoryStore
        from anton_tui.paths import AntonPaths

        store = HistoryStore(AntonPaths(self.layers.home, self.layers.project_dir).episodes)
        try:
            session_id = self.resume or store.newest()
            if not session_id:
                return None
            return session_id, transcript(store.read_saved(session_id))
        except (OSError, ValueError, HistoryBroken):
            return None

    def first_look(self) -> FirstLook | None:
        """The first rows of the rules, lessons and profile listings, read from the start of the files (a few small
        reads: the first frame shows them, well before `build` is done); None for the demo, whose memory the build
        makes."""
        if self.demo:
            return None
        from anton_tui.paths import AntonPaths, managed_dir
        from anton_tui.runtime.first_look import read_first_look

        managed = self.layers.chosen(["managed_memory"]).get("managed_memory")
        paths = AntonPaths(self.layers.home, self.layers.project_dir)
        tiers = [("global", paths.global_memory), ("project", paths.project_memory)]
        return read_first_look(tiers, managed_dir(managed[0] if managed else None))

    def build(self) -> Runtime:
        """Validate the settings and build everything behind them. Blocking: run it in a thread. Raises
        `SettingsError` naming the first bad variable, its value and where it came from."""
        from anton_tui.config import settings_from_layers

        settings = settings_from_layers(self.layers)
        if self.theme:
            settings.theme = self.theme
        if self.demo:
            return build_demo_runtime(settings)
        from anton_tui.agent.events import ErrorOccurred
        from anton_tui.agent.factory import build_session
        from anton_tui.memory.stores import MemoryStores
        from anton_tui.runtime.runtime import Runtime

        stores = MemoryStores.from_settings(settings)
        session = build_session(settings, stores=stores)
        for label in self.skills:
            try:
                session.turn_memory.preload(stores.skills, label)
            except ValueError as exc:  # said in the app, which goes on without it
                session.emit(ErrorOccurred(f"--skill {label}: {exc}", retryable=False))
        return Runtime(settings, session, stores=stores, control=session)

    def settings_for_setup(self) -> tuple[Any, dict[str, str | None]]:
        """Settings that load once every bad value is left out, for the setup screen to fix them (None when even
        that fails), and the `.env` updates that take the bad values out of the project's file: the setup saves
        them with its own, so the next start does not stop at the same value."""
        from anton_tui.config import settings_from_layers

        layers = self.layers
        dropped: list[SettingsError] = []
        project_env = str(self.layers.project_dir / ".anton" / ".env")
        for _ in range(SETUP_ATTEMPTS):
            try:
                settings = settings_from_layers(layers)
            except SettingsError as exc:
                if any(seen.variable == exc.variable for seen in dropped):
                    return None, {}
                dropped.append(exc)
                layers = layers.without([exc.variable])
                continue
            return settings, {exc.variable: None for exc in dropped if exc.source == project_env}
        return None, {}

    async def save_settings(self, updates: dict[str, str | None]) -> Settings:
        """Before any runtime exists (the setup that fixes a bad setting): write `updates` to the project's
        `.anton/.env` and return the settings as they now load (raising as `Runtime.save_settings` does)."""
        from anton_tui.runtime.runtime import save_settings

        return await save_settings(self.layers.project_dir, updates)

    def reread(self) -> RuntimeStarter:
        """A starter for the same project with its sources read again (after the setup screen wrote them)."""
        layers = read_env_layers(self.layers.project_dir, environ=dict(self.layers.layers[-1][1]))
        return RuntimeStarter(layers, theme=self.theme, demo=self.demo, resume=self.resume, skills=self.skills)


def build_demo_runtime(settings: Any) -> Runtime:
    from anton_tui.agent.demo import DEMO_BANNER, build_demo
    from anton_tui.runtime.runtime import Runtime

    replay = build_demo(settings)
    return Runtime(
        replay.settings,
        replay.session,
        stores=replay.stores,
        control=replay.session,
        closing=replay,
        banner=DEMO_BANNER,
        suggest_prompt=replay.next_prompt,
        demo=True,
    )
