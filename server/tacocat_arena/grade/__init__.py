"""``tacocat-arena grade``: a course's autograder over the tournament, stats and launch layers.

``rubric`` reads what a grade is made of, ``grader`` runs one bot through it, ``outputs``
writes what teachers and course platforms read, ``batch`` grades a folder of submissions.
"""
