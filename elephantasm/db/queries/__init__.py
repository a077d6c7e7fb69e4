"""The statements of each aggregate, one module per aggregate (``keys``: orgs and their API keys…).

Functions take the caller's ``AsyncSession`` (or connection) and, for tenant data, an explicit
``org_id``; they run in the caller's transaction and hold no rules: validation, errors and
orchestration stay in ``elephantasm.services``.
"""
