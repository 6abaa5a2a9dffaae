"""Writes the model repository, docker-compose.yml and Dockerfile from a validated plan."""
