"""SB3's ``VecVideoRecorder``: mp4 videos of a vector env's rendered frames (moviepy, as gymnasium's
``RecordVideo`` writes them; ``pip install 'lit-sb3-core[video]'``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import numpy as np

from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecVideoRecorder"]

_log = logging.getLogger(__name__)


class VecVideoRecorder(VecEnvWrapper):
    """Record ``video_length`` steps of rendered frames whenever ``record_video_trigger(step)`` says so.

    The env must render ``rgb_array`` frames (``gymnasium.make(id, render_mode="rgb_array")``); with several
    envs each frame shows them tiled. Each video is written to ``video_folder`` as
    ``<name_prefix>-step-<start>-to-step-<end>.mp4`` when it is complete or the wrapper is closed.

    Args:
        venv: the vector env to record.
        video_folder: where videos are written (created if missing).
        record_video_trigger: ``step -> bool``: start a recording at this vector step.
        video_length: steps per video.
        name_prefix: start of the file names.
    """

    def __init__(
        self,
        venv: VecEnv,
        video_folder: str,
        record_video_trigger: Callable[[int], bool],
        video_length: int = 200,
        name_prefix: str = "rl-video",
    ) -> None:
        super().__init__(venv)
        if self.render_mode != "rgb_array":
            raise ValueError(
                f"VecVideoRecorder needs envs that render rgb_array frames, not render_mode={self.render_mode!r}: "
                "create them with gymnasium.make(env_id, render_mode='rgb_array')."
            )
        try:
            import moviepy  # noqa: F401
        except ImportError as exc:
            raise ImportError("VecVideoRecorder writes videos with moviepy: pip install moviepy.") from exc
        sub_metadata = venv.get_attr("metadata")[0] if venv.has_attr("metadata") else {}
        self.frames_per_sec = int((sub_metadata or {}).get("render_fps", 30))
        self.record_video_trigger = record_video_trigger
        self.video_folder = os.path.abspath(video_folder)
        os.makedirs(self.video_folder, exist_ok=True)
        self.name_prefix = name_prefix
        self.video_length = video_length
        self.step_id = 0
        self.recording = False
        self.recorded_frames: list[np.ndarray] = []
        self.video_path = ""

    def reset(self) -> VecEnvObs:
        observations = self.venv.reset()
        if self.record_video_trigger(self.step_id):
            self._start()
        return observations

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        self.step_id += 1
        if self.recording:
            self._capture()
            if len(self.recorded_frames) > self.video_length:
                self._stop()
        elif self.record_video_trigger(self.step_id):
            self._start()
        return observations, rewards, dones, infos

    def _start(self) -> None:
        if self.recording:
            self._stop()
        name = f"{self.name_prefix}-step-{self.step_id}-to-step-{self.step_id + self.video_length}.mp4"
        self.video_path = os.path.join(self.video_folder, name)
        self.recording = True
        self._capture()

    def _capture(self) -> None:
        frame = self.venv.render(mode="rgb_array")
        if isinstance(frame, np.ndarray):
            self.recorded_frames.append(frame)
        else:
            _log.warning(
                "VecVideoRecorder stopped: render() returned %s, not an image.", type(frame).__name__
            )
            self._stop()

    def _stop(self) -> None:
        if self.recorded_frames:
            from moviepy.video.io.ImageSequenceClip import ImageSequenceClip

            clip = ImageSequenceClip(self.recorded_frames, fps=self.frames_per_sec)
            clip.write_videofile(self.video_path, logger=None)
            clip.close()
            print(f"Saving video to {self.video_path}")
        self.recorded_frames = []
        self.recording = False

    def close(self) -> None:
        if self.recording:
            self._stop()
        super().close()
