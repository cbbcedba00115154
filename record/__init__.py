"""The match record: the run folder `referee run` writes and the review and evaluation tools read.

`record.run_folder` owns its file names, its writer and its one reader. It sits
between `rules` (which it uses) and `vision` / `review` (which use it): like
`rules`, it imports neither numpy nor OpenCV.
"""
