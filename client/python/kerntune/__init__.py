"""Python client for kerntune, a daemon that tunes CUDA kernels (docs/api.md).

    import kerntune
    client = kerntune.Client()            # $KERNTUNE_SERVER or http://127.0.0.1:8080
    job = client.submit("gemm", {"M": 4096, "N": 4096, "K": 4096}, "bf16")
    job = client.wait(job.id)              # progress bar on stderr, from the job's event stream
    for event in client.events(job.id):    # or the events themselves: status, progress, best, end
        print(event.name, event.data)
    best = client.best("gemm", {"M": 4096, "N": 4096, "K": 4096}, "bf16")
    batch = client.tune_all("shapes.jsonl", budget_per_shape=64)  # kerntune.torch.record's file
    client.register_family("my_family/")  # a daemon started with --allow-user-families
"""

from .client import Client, read_token_file, token_from_environment
from .errors import (ApiError, DaemonUnreachable, FamilyNotRegistered, JobFailed, KerntuneError, NotTunedYet,
                     TokenError)
from .models import (Batch, Best, Family, Job, JobEvent, Kernel, NumericError, ParetoFront, Prediction, Progress, Timing, Variant,
                     to_csv, to_records)

__all__ = [
    "Client", "read_token_file", "token_from_environment",
    "ApiError", "DaemonUnreachable", "FamilyNotRegistered", "JobFailed", "KerntuneError", "NotTunedYet", "TokenError",
    "Batch", "Best", "Family", "Job", "JobEvent", "Kernel", "NumericError", "ParetoFront", "Prediction", "Progress", "Timing", "Variant",
    "to_csv", "to_records",
]
__version__ = "0.1.0"
