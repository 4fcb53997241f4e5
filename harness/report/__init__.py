"""Reports over journals: the qualification report (Markdown, HTML, JSON, JUnit) and its verifiable
bundle, the nightly lane matrix, and the regression diff against a committed baseline.

Importing it loads no template engine, probes nothing and runs nothing; each module does its one job.
"""
