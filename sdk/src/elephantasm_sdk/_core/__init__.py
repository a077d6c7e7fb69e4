"""The I/O-free core shared by the sync and async clients.

Request building, response parsing, error mapping and retry decisions are pure functions here;
the clients only move bytes and sleep.
"""
