"""Schema fuzzing (schemathesis) of the running service's own OpenAPI document.

Every documented operation gets schema-valid and schema-violating requests; each answer
must not be a 5xx, must have a status the operation documents, the documented content
type and a body matching the documented schema (ParseResponse/ProcessResponse for 200,
ErrorResponse for every 4xx); schema-violating input must be refused with a 4xx; other
methods must get 405. The admin routes are fuzzed too: the test server has no admin
key, so they must answer the documented 403 (and never reload the workers).
Examples are bounded and the seed fixed, so a run takes the same cases every time.
"""
from __future__ import annotations

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig

CONFIG = SchemathesisConfig.from_dict({
    "seed": 20240808,
    "generation": {"mode": "all", "max-examples": 50, "deterministic": True,
                   "database": "none", "allow-x00": True},
    "phases": {"stateful": {"enabled": False}},
    "request-timeout": 60,
    "checks": {
        # the service refuses many schema-valid values (an empty sentence, an unknown
        # model): the schema cannot say everything the validation knows
        "positive_data_acceptance": {"enabled": False},
        "negative_data_rejection": {"expected-statuses": [400, 401, 404, 405, 413, 415, 422]},
    },
})


@pytest.fixture(scope="module")
def api_schema(server):
    return schemathesis.openapi.from_url(server.url + "/openapi.json", config=CONFIG)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_openapi_contract(case):
    case.call_and_validate()


def test_service_survived(survivor, fuzz_http):
    survivor.check(fuzz_http)
