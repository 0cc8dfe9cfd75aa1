"""Platform adapters: each turns its platform's events into ChatEvents for the service."""
