"""Comparing delegation prompts: experiments, metrics, judge, statistics, reports."""
