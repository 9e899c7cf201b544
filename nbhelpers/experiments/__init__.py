"""The notebooks' experiments: runs that train a model or measure one, built on the formula
modules one layer down. Each module holds one experiment:

* `heldout`: held-out sentences with their exact next-token distributions, and the KL of a
  model from the truth on them (notebooks 08 and 09);
* `training_loop`: the one loop every training run steps through;
* `pretraining`: the language-model objective and its recipe (notebook 08);
* `sampling`: sentences sampled from a model, judged by the grammar (notebooks 08 and 09);
* `course_model`: the course's trained model and its training run, stored in nbhelpers/data/;
* `head_specialisation`: two heads that split a job between them (notebook 05);
* `deep_stack`: what residuals and LayerNorm do to a deep stack of blocks (notebook 07);
* `fine_tuning`: fine-tuning the course model on labelled tasks, and the stored curves of
  GPT-1's claims in miniature (notebook 11).
"""
