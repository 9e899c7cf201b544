// KeyboardScope (nbhelpers/widgets/keyboard_scope.py): an invisible widget that lets a
// focused slider of the explorer it sits in keep its arrow keys. Notebook 7 runs its
// shortcuts before a widget sees the key (ArrowLeft and ArrowRight move the cell cursor);
// JupyterLab 4 lets the widget go first. Lumino skips a shortcut when the element it would
// match, here the focused control itself (`... :focus`), carries data-lm-suppress-shortcuts:
// so each control is marked as it takes the focus.
function render({ el }) {
  el.style.display = "none";
  let frames = 0;
  const watch = () => {
    // The box appends this view's element after render returns: wait until it is placed.
    const explorer = el.parentElement;
    if (!explorer) {
      if (++frames < 600) requestAnimationFrame(watch);
      return;
    }
    explorer.addEventListener("focusin", (event) => {
      if (event.target instanceof HTMLElement) event.target.dataset.lmSuppressShortcuts = "true";
    });
  };
  watch();
}

export default { render };
