"""Imported by the engine's fork server before it forks the bot's engine workers (see
``engine_workers.py``): what it loads here, every worker shares instead of loading a copy of its own."""

from bot import engine_workers

engine_workers.preload()
