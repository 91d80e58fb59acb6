"""``python -m tacocat_arena.grade JOB``: one student's grade in a process of its own
(``batch.grade_batch`` starts one per student, so nothing one student's bot does can take
another's grade with it)."""

import sys

from tacocat_arena.grade.batch import Job, run_job

if __name__ == "__main__":
    run_job(Job.from_json(sys.argv[1]))
