"""The workflow layer: config validation, the plan of jobs, the stage functions the job
scripts call, model selection and job plumbing. Imports the library; the library never imports it."""
